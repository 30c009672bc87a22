/* OpenMP in record mode: an OMPT tool (OpenMP 5.x tools interface, found by
 * LLVM's libomp through ompt_start_tool) that turns the runtime's callbacks
 * into the openmp model's events (spec emu.md 4.5): parallel regions (fork
 * call, user microtask, worker loop), barriers, worksharing, tasks (ids,
 * running, taskwait, taskgroup) and critical sections. GNU libgomp has no
 * OMPT: one notice says so and the rest is recorded as usual.
 *
 * The subsystem channel is a stack that the emulator checks strictly, while
 * OMPT's ends do not always nest (a task completes inside a barrier, a
 * region ends after its implicit barrier's end): each thread keeps a shadow
 * of its stack, and ending an entry below the top closes the entries above
 * it first and opens them again afterwards. */
#include "base/event.h"
#include "rt/instr.h"
#include "trace/versions.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The part of the OMPT interface used here (OpenMP 5.1, 4.x) ---- */

typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *name);
typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);

typedef struct {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

enum ompt_event {
	OMPT_THREAD_BEGIN = 1,
	OMPT_THREAD_END = 2,
	OMPT_PARALLEL_BEGIN = 3,
	OMPT_PARALLEL_END = 4,
	OMPT_TASK_CREATE = 5,
	OMPT_TASK_SCHEDULE = 6,
	OMPT_IMPLICIT_TASK = 7,
	OMPT_WORK = 20,
	OMPT_SYNC_REGION = 23,
	OMPT_MUTEX_ACQUIRE = 26,
	OMPT_MUTEX_ACQUIRED = 27,
	OMPT_MUTEX_RELEASED = 17,
};

enum { SCOPE_BEGIN = 1, SCOPE_END = 2, SCOPE_BEGINEND = 3 };
enum { THREAD_WORKER = 2 };
enum { TASK_IMPLICIT = 0x2, TASK_EXPLICIT = 0x4, TASK_UNDEFERRED = 0x08000000 };
enum { STATUS_COMPLETE = 1, STATUS_CANCEL = 3, STATUS_DETACH = 4, STATUS_LATE_FULFILL = 6 };
enum { MUTEX_CRITICAL = 5 };
enum {
	SYNC_BARRIER = 1,
	SYNC_BARRIER_IMPLICIT = 2,
	SYNC_BARRIER_EXPLICIT = 3,
	SYNC_BARRIER_IMPLEMENTATION = 4,
	SYNC_TASKWAIT = 5,
	SYNC_TASKGROUP = 6,
	SYNC_REDUCTION = 7,
	SYNC_BARRIER_IMPLICIT_WORKSHARE = 8,
	SYNC_BARRIER_IMPLICIT_PARALLEL = 9,
	SYNC_BARRIER_TEAMS = 10,
};
enum {
	WORK_LOOP = 1,
	WORK_SECTIONS = 2,
	WORK_SINGLE_EXECUTOR = 3,
	WORK_SINGLE_OTHER = 4,
	WORK_DISTRIBUTE = 6,
	WORK_LOOP_STATIC = 10,
	WORK_LOOP_DYNAMIC = 11,
	WORK_LOOP_GUIDED = 12,
	WORK_LOOP_OTHER = 13,
};

/* ---- The thread's subsystem stack ---- */

#define DEPTH 64
#define TASK_TYPE 1 /* the one task type declared: "OpenMP task" */

/* Entries are the category and value of the push event (PBj, PT[...). */
struct shadow {
	char ent[DEPTH][2];
	int n;
	int over; /* pushes beyond DEPTH, not emitted */
	uint32_t task[DEPTH]; /* explicit tasks running, innermost last */
	char run[DEPTH]; /* their subsystem: '[' running, 'i' running if0 */
	int ntasks;
};

static __thread struct shadow sh;

static void declare(struct rt_thread *t)
{
	memset(&sh, 0, sizeof(sh)); /* a new stream starts with empty stacks */
	rt_instr_meta_set(t, "ovni.require.openmp", MODEL_OPENMP_VERSION);
	rt_meta_changed(t);
}

static struct rt_thread *omp_thread(void)
{
	if (rt_filter['P'] & RT_FILTER_DROP)
		return NULL;
	return rt_instr_thread(RT_INSTR_OMP, declare);
}

static void emit(struct rt_thread *t, char c, char v, const void *payload, size_t n)
{
	rt_instr_emit(t, (char[3]){ 'P', c, v }, payload, n);
}

static char pop_value(char v)
{
	return v == '[' ? ']' : (char)(v - 'a' + 'A');
}

static void push(struct rt_thread *t, char c, char v)
{
	if (sh.n == DEPTH) {
		sh.over++;
		return;
	}
	sh.ent[sh.n][0] = c;
	sh.ent[sh.n][1] = v;
	sh.n++;
	emit(t, c, v, NULL, 0);
}

/* Ends the innermost c/v entry; entries above it are closed and reopened. */
static void pop(struct rt_thread *t, char c, char v)
{
	int i = sh.n - 1;
	while (i >= 0 && !(sh.ent[i][0] == c && sh.ent[i][1] == v))
		i--;
	if (i < 0) {
		if (sh.over > 0)
			sh.over--;
		return;
	}
	for (int k = sh.n - 1; k >= i; k--)
		emit(t, sh.ent[k][0], pop_value(sh.ent[k][1]), NULL, 0);
	for (int k = i + 1; k < sh.n; k++) {
		sh.ent[k - 1][0] = sh.ent[k][0];
		sh.ent[k - 1][1] = sh.ent[k][1];
		emit(t, sh.ent[k][0], sh.ent[k][1], NULL, 0);
	}
	sh.n--;
}

static void scoped(int endpoint, char c, char v)
{
	struct rt_thread *t = omp_thread();
	if (!t)
		return;
	if (endpoint == SCOPE_BEGIN || endpoint == SCOPE_BEGINEND)
		push(t, c, v);
	if (endpoint == SCOPE_END || endpoint == SCOPE_BEGINEND)
		pop(t, c, v);
}

/* ---- Tasks ---- */

static _Atomic uint32_t next_task = 1;
/* 0: the task type is not declared in this process, 1: being declared, 2: declared. */
static _Atomic int type_state;

/* POc before the first PPc of the process, from the thread creating it. */
static void declare_type(struct rt_thread *t)
{
	int zero = 0;
	if (atomic_load(&type_state) == 2)
		return;
	if (!atomic_compare_exchange_strong(&type_state, &zero, 1)) {
		while (atomic_load(&type_state) != 2)
			;
		return;
	}
	static const char label[] = "OpenMP task";
	uint8_t data[4 + sizeof(label)], ev[EV_JUMBO_HEADER_SIZE + sizeof(data)];
	uint32_t type = TASK_TYPE;
	memcpy(data, &type, 4);
	memcpy(data + 4, label, sizeof(label));
	rt_stream_put(t, ev, ev_encode_jumbo(ev, "POc", ovni_clock_now(), data, sizeof(data)));
	atomic_store(&type_state, 2);
}

static void after_fork_child(void)
{
	atomic_store(&type_state, 0);
}

/* Task data of an explicit task: its id shifted left by 2, bit 1 set when
 * it is undeferred (if(0): runs at once in its creator), bit 0 set. */
static uint32_t task_id(const ompt_data_t *d)
{
	return d && (d->value & 1) ? (uint32_t)(d->value >> 2) : 0;
}

static char task_run_value(const ompt_data_t *d)
{
	return d->value & 2 ? 'i' : '[';
}

static int running_here(uint32_t id)
{
	for (int i = 0; i < sh.ntasks; i++)
		if (sh.task[i] == id)
			return 1;
	return 0;
}

static void task_begin(struct rt_thread *t, const ompt_data_t *d)
{
	uint32_t id = task_id(d);
	if (!id || running_here(id) || sh.ntasks == DEPTH)
		return;
	sh.task[sh.ntasks] = id;
	sh.run[sh.ntasks++] = task_run_value(d);
	emit(t, 'P', 'x', &id, 4);
	push(t, 'T', task_run_value(d));
}

/* Ends the innermost running task if it is id. */
static void task_end(struct rt_thread *t, uint32_t id)
{
	if (!id || sh.ntasks == 0 || sh.task[sh.ntasks - 1] != id)
		return;
	sh.ntasks--;
	pop(t, 'T', sh.run[sh.ntasks]);
	emit(t, 'P', 'e', &id, 4);
}

static void on_task_create(ompt_data_t *parent, const void *frame, ompt_data_t *task, int flags, int deps,
			   const void *ra)
{
	if (!(flags & TASK_EXPLICIT) || !task)
		return;
	uint32_t id = atomic_fetch_add(&next_task, 1);
	task->value = (uint64_t)id << 2 | (flags & TASK_UNDEFERRED ? 2 : 0) | 1;
	struct rt_thread *t = omp_thread();
	if (!t)
		return;
	declare_type(t);
	uint32_t p[2] = { id, TASK_TYPE };
	push(t, 'T', 'a');
	emit(t, 'P', 'c', p, 8);
	pop(t, 'T', 'a');
}

/* The prior task leaves the thread (ends when it completed, else stays
 * below the next one), the next one runs. */
static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	struct rt_thread *t = omp_thread();
	if (!t)
		return;
	if (status == STATUS_COMPLETE || status == STATUS_CANCEL || status == STATUS_DETACH ||
	    status == STATUS_LATE_FULFILL)
		task_end(t, task_id(prior));
	if (next)
		task_begin(t, next);
}

/* ---- Regions, barriers, worksharing, critical ---- */

static void on_thread_begin(int type, ompt_data_t *data)
{
	if (type == THREAD_WORKER)
		scoped(SCOPE_BEGIN, 'H', '[');
}

static void on_thread_end(ompt_data_t *data)
{
	struct rt_thread *t = omp_thread();
	if (!t)
		return;
	while (sh.ntasks > 0)
		task_end(t, sh.task[sh.ntasks - 1]);
	while (sh.n > 0)
		pop(t, sh.ent[sh.n - 1][0], sh.ent[sh.n - 1][1]);
}

static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *par, unsigned n, int flags,
			      const void *ra)
{
	scoped(SCOPE_BEGIN, 'C', 'f');
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra)
{
	scoped(SCOPE_END, 'C', 'f');
}

static void on_implicit_task(int endpoint, ompt_data_t *par, ompt_data_t *task, unsigned n, unsigned index,
			     int flags)
{
	if (flags & TASK_IMPLICIT)
		scoped(endpoint, 'M', 'u');
}

static void on_sync_region(int kind, int endpoint, ompt_data_t *par, ompt_data_t *task, const void *ra)
{
	switch (kind) {
	case SYNC_BARRIER_IMPLICIT:
	case SYNC_BARRIER_IMPLICIT_PARALLEL: scoped(endpoint, 'B', 'j'); break;
	case SYNC_BARRIER:
	case SYNC_BARRIER_EXPLICIT:
	case SYNC_BARRIER_IMPLEMENTATION:
	case SYNC_BARRIER_IMPLICIT_WORKSHARE:
	case SYNC_BARRIER_TEAMS: scoped(endpoint, 'B', 'b'); break;
	case SYNC_TASKWAIT: scoped(endpoint, 'T', 't'); break;
	case SYNC_TASKGROUP: scoped(endpoint, 'T', 'g'); break;
	}
}

static void on_work(int kind, int endpoint, ompt_data_t *par, ompt_data_t *task, uint64_t count, const void *ra)
{
	switch (kind) {
	case WORK_LOOP:
	case WORK_LOOP_STATIC:
	case WORK_LOOP_OTHER: scoped(endpoint, 'W', 's'); break;
	case WORK_LOOP_DYNAMIC:
	case WORK_LOOP_GUIDED: scoped(endpoint, 'W', 'y'); break;
	case WORK_SECTIONS: scoped(endpoint, 'W', 'e'); break;
	case WORK_SINGLE_EXECUTOR:
	case WORK_SINGLE_OTHER: scoped(endpoint, 'W', 'i'); break;
	case WORK_DISTRIBUTE: scoped(endpoint, 'W', 'd'); break;
	}
}

static void on_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id, const void *ra)
{
	if (kind == MUTEX_CRITICAL)
		scoped(SCOPE_BEGIN, 'I', 'a');
}

static void on_mutex_acquired(int kind, uint64_t wait_id, const void *ra)
{
	if (kind != MUTEX_CRITICAL)
		return;
	scoped(SCOPE_END, 'I', 'a');
	scoped(SCOPE_BEGIN, 'I', '[');
}

static void on_mutex_released(int kind, uint64_t wait_id, const void *ra)
{
	if (kind == MUTEX_CRITICAL)
		scoped(SCOPE_END, 'I', '[');
}

/* ---- Registration ---- */

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (!set)
		return 0;
	static const struct {
		int event;
		ompt_callback_t fn;
	} cbs[] = {
		{ OMPT_THREAD_BEGIN, (ompt_callback_t)on_thread_begin },
		{ OMPT_THREAD_END, (ompt_callback_t)on_thread_end },
		{ OMPT_PARALLEL_BEGIN, (ompt_callback_t)on_parallel_begin },
		{ OMPT_PARALLEL_END, (ompt_callback_t)on_parallel_end },
		{ OMPT_TASK_CREATE, (ompt_callback_t)on_task_create },
		{ OMPT_TASK_SCHEDULE, (ompt_callback_t)on_task_schedule },
		{ OMPT_IMPLICIT_TASK, (ompt_callback_t)on_implicit_task },
		{ OMPT_WORK, (ompt_callback_t)on_work },
		{ OMPT_SYNC_REGION, (ompt_callback_t)on_sync_region },
		{ OMPT_MUTEX_ACQUIRE, (ompt_callback_t)on_mutex_acquire },
		{ OMPT_MUTEX_ACQUIRED, (ompt_callback_t)on_mutex_acquired },
		{ OMPT_MUTEX_RELEASED, (ompt_callback_t)on_mutex_released },
	};
	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++)
		set(cbs[i].event, cbs[i].fn);
	pthread_atfork(NULL, NULL, after_fork_child);
	return 1;
}

static void finalize(ompt_data_t *data)
{
}

/* Called by libomp when it starts, maybe before the shim's constructor:
 * the environment tells whether `ovni record` runs this process. */
RT_API ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version)
{
	static ompt_start_tool_result_t tool = { initialize, finalize, { 0 } };
	const char *state = rt_env("OVNI_RECORD_STATE");
	return state && *state && !rt_instr_is_launcher() ? &tool : NULL;
}

/* GNU libgomp calls no tool: say once that OpenMP is not recorded. */
__attribute__((constructor)) static void gomp_notice(void)
{
	const char *state = rt_env("OVNI_RECORD_STATE");
	if (!state || !*state || rt_instr_is_launcher())
		return;
	/* LLVM's libomp has GOMP_ entry points too, and also its own __kmpc_. */
	if (!dlsym(RTLD_DEFAULT, "GOMP_parallel") || dlsym(RTLD_DEFAULT, "__kmpc_fork_call"))
		return;
	rt_warn("ovni record: %s uses GNU libgomp, which has no OMPT interface: its OpenMP regions are not "
		"recorded (build with clang -fopenmp and LLVM's libomp to record them)\n",
		program_invocation_short_name);
}
