/* Record mode: `ovni record` preloads the shim with OVNI_RECORD_STATE set,
 * and the shim traces the unmodified program. Each process gets a stream per
 * thread (OHx when it starts, OHe when it ends), CPU placement (a thread
 * pinned to one free CPU runs there, others on the virtual CPU), affinity
 * changes (OAs/OAr), fork (a new process), exec (the stream goes on in the
 * new image), and every exit path. No signal handler is installed: a thread
 * killed by a signal leaves its stream as it was (the mapping survives), and
 * `ovni record` (or `ovni emu --salvage`) ends it at its last event. */
#include "rt/instr.h"
#include "rt/kernel.h"
#include "rt/rt.h"
#include "base/file.h"
#include "record/state.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int rt_record_mode;
static struct rt_state *state;
static _Atomic uint64_t next_tag = 1;
static int has_rank, rank, nranks;

/* Ids in the trace: the kernel's pid or tid plus this process's pid
 * namespace base (lib/record/state.h), 0 in the recorder's namespace. */
static int id_base;

/* fresh: this process is pid 1 of its namespace, which is then a new one
 * even if its inode was met before: the kernel gives an ended namespace's
 * inode to the next, and two namespaces' pid 1 must not share a stream.
 * The slot of the old one is retired (never matched again). */
static int ns_base(int fresh)
{
	uint64_t ns = rt_state_pidns_now();
	if (!state->pidns || !ns || ns == state->pidns)
		return 0;
	for (int i = 0; i < RT_STATE_MAXNS; i++) {
		uint64_t seen = 0;
		if (atomic_compare_exchange_strong(&state->pidns_seen[i], &seen, ns))
			return (i + 1) << RT_STATE_NS_SHIFT;
		if (seen != ns)
			continue;
		if (!fresh)
			return (i + 1) << RT_STATE_NS_SHIFT;
		atomic_store(&state->pidns_seen[i], ns | RT_STATE_NS_RETIRED);
	}
	return 0; /* that many namespaces: ids as the kernel gives them */
}

static int trace_id(int kernel_id)
{
	return id_base + kernel_id;
}

/* ---- Placement ---- */

static int cpu_index(int phyid)
{
	for (uint32_t i = 0; i < state->ncpus; i++)
		if (state->phyid[i] == phyid)
			return (int)i;
	return -1;
}

/* The CPU index a thread whose affinity is set runs on: its only CPU if it
 * is pinned and the CPU is free, else the virtual CPU (-1). */
static int place(int tid, const cpu_set_t *set)
{
	if (CPU_COUNT(set) != 1)
		return -1;
	int phy = 0;
	while (!CPU_ISSET(phy, set))
		phy++;
	int idx = cpu_index(phy);
	if (idx < 0)
		return -1;
	int32_t free_slot = 0;
	if (atomic_compare_exchange_strong(&state->owner[idx], &free_slot, tid) || free_slot == tid)
		return idx;
	return -1;
}

static void release(int idx, int tid)
{
	if (idx >= 0) {
		int32_t mine = tid;
		atomic_compare_exchange_strong(&state->owner[idx], &mine, 0);
	}
}

static int place_self(int tid)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	return place(tid, &set);
}

/* ---- The threads of this process (for affinity changes of others) ---- */

#define MAXREG 4096
static struct {
	_Atomic int tid;
	pthread_t th;
	struct rt_thread *t;
	int slot; /* of its stream in the state, -1 if none */
} reg[MAXREG];

static void reg_add(struct rt_thread *t)
{
	for (int i = 0; i < MAXREG; i++) {
		int zero = 0;
		if (atomic_load(&reg[i].tid) == 0 && atomic_compare_exchange_strong(&reg[i].tid, &zero, -1)) {
			reg[i].th = pthread_self();
			reg[i].t = t;
			reg[i].slot = t->slot;
			atomic_store(&reg[i].tid, t->tid);
			return;
		}
	}
}

static void reg_del(int tid)
{
	for (int i = 0; i < MAXREG; i++)
		if (atomic_load(&reg[i].tid) == tid) {
			atomic_store(&reg[i].tid, 0);
			return;
		}
}

static struct rt_thread *reg_find(int tid, const pthread_t *th)
{
	for (int i = 0; i < MAXREG; i++) {
		int x = atomic_load(&reg[i].tid);
		if (x > 0 && (th ? pthread_equal(reg[i].th, *th) : x == tid))
			return reg[i].t;
	}
	return NULL;
}

/* ---- Thread lifecycle ---- */

static void emit_execute(struct rt_thread *t, int creator, uint64_t tag)
{
	uint8_t p[16];
	memcpy(p, &t->cpu, 4);
	memcpy(p + 4, &creator, 4);
	memcpy(p + 8, &tag, 8);
	rt_emit_raw(t, "OHx", rt_clock_exact(t), p, 16);
}

/* The index of a new entry for the stream of pid and tid, -1 if none. */
static int register_stream(int pid, int tid)
{
	uint32_t i = atomic_fetch_add(&state->nstreams, 1);
	if (i >= RT_STATE_MAXSTREAMS)
		return -1;
	state->streams[i].pid = pid;
	state->streams[i].tid = tid;
	return (int)i;
}

/* The last entry of the stream of pid and tid (a stream continued after
 * an exec), -1 if none; it is no longer done (nor ended by an exit). */
static int find_stream(int pid, int tid)
{
	uint32_t n = atomic_load(&state->nstreams);
	if (n > RT_STATE_MAXSTREAMS)
		n = RT_STATE_MAXSTREAMS;
	for (uint32_t i = n; i-- > 0;) {
		struct rt_state_stream *e = &state->streams[i];
		if (e->pid == pid && e->tid == tid) {
			atomic_store(&e->done, 0);
			atomic_store(&e->exited, 0);
			return (int)i;
		}
	}
	return -1;
}

/* The thread's stream has ended cleanly with events and bytes: ovni
 * record counts it without reading it. Memory stores only. */
static void publish_stream(const struct rt_thread *t, uint64_t events, uint64_t bytes)
{
	if (t->slot < 0 || t->nev_unknown)
		return;
	struct rt_state_stream *e = &state->streams[t->slot];
	e->events = events;
	e->bytes = bytes;
	atomic_store_explicit(&e->done, 1, memory_order_release);
}

int rt_record_meta_spill(const struct rt_thread *t, const char *s, size_t len, int unfinished)
{
	if (!state || t->slot < 0)
		return -1;
	struct rt_state_stream *e = &state->streams[t->slot];
	if (!s) {
		atomic_store_explicit(&e->meta, 0, memory_order_release);
		return 0;
	}
	if (len == 0 || len > RT_STATE_META_BYTES) /* one that can never fit takes no room */
		return -1;
	uint64_t off = atomic_fetch_add(&state->meta_used, len);
	if (off > RT_STATE_META_BYTES || len > RT_STATE_META_BYTES - off)
		return -1;
	memcpy(state->meta + off, s, len);
	uint64_t m = off << 24 | len | (unfinished ? RT_STATE_META_UNFINISHED : 0);
	atomic_store_explicit(&e->meta, m, memory_order_release);
	return 0;
}

static void add_cpus(struct rt_thread *t);

/* A thread starts being traced: its stream, metadata, and OHx. The first
 * of a process (or of an image) lists the loom's CPUs too. Its metadata is
 * written once, with all of that: a thread killed before then is salvaged
 * from what the recorder knows (each write is a file made and renamed, a
 * round trip to the metadata server on a parallel file system). */
static void thread_begin(int creator, uint64_t tag, int resume, int first)
{
	struct rt_thread *t = &rt_self;
	int tid = trace_id(rt_gettid());
	/* A cancellation point inside would leave a half-made stream. */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	int slot = resume ? find_stream(rt_proc.pid, tid) : register_stream(rt_proc.pid, tid);
	rt_thread_start(t, tid, resume);
	t->slot = slot;
	t->automatic = 1;
	if (has_rank) {
		t->has_rank = 1;
		t->rank = rank;
		t->nranks = nranks;
	}
	if (first)
		add_cpus(t);
	if (!resume)
		atomic_fetch_add(&state->nthreads, 1);
	t->cpu = place_self(tid);
	reg_add(t);
	/* The previous owner of this stream was cut (killed by an exec from
	 * another of its threads): it ends where it stopped. */
	if (t->was_cut)
		rt_emit_now(t, "OHe", NULL, 0);
	emit_execute(t, creator, tag);
	rt_kernel_begin(t, state);
	rt_mapper_prepare(t); /* once the collector runs */
	rt_meta_changed(t); /* once the kernel model is required, not before */
	rt_meta_write_progress(t);
	pthread_setcancelstate(cancel, NULL);
}

/* The thread ends: OHe, then its CPU is free. The OHe's clock, 0 if untraced. */
static uint64_t thread_finish(struct rt_thread *t)
{
	if (!t->ready || !t->automatic)
		return 0;
	rt_kernel_end(t);
	uint64_t now = rt_clock_exact(t);
	rt_emit_raw(t, "OHe", now, NULL, 0);
	uint64_t events = t->nev, bytes = rt_stream_used(t);
	rt_thread_end(t);
	if (!t->lost) /* else (also when the final cut failed) the recorder ends it at its last event */
		publish_stream(t, events, bytes);
	rt_clock_wait_past(now);
	release(__atomic_load_n(&t->cpu, __ATOMIC_RELAXED), t->tid);
	reg_del(t->tid);
	return now;
}

int rt_record_owns(const struct rt_thread *t, const struct ovni_ev *ev)
{
	return t->automatic && ev->header.model == 'O' &&
	       (ev->header.category == 'H' || ev->header.category == 'A');
}

/* ---- Process ---- */

/* The process's executable and arguments, in the metadata of its first
 * thread ("record" beside "ovni": the reference ignores it). After an exec,
 * the new image's. */
static void add_identity(struct rt_thread *t)
{
	char exe[PATH_MAX], *args = NULL;
	size_t cap = 0, len = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	struct json *argv = json_new(JSON_ARRAY);
	if (!argv || (n > 0 && json_dotset(t->meta, "record.exe", json_new_string(exe)) != 0))
		rt_die("ovni record", "out of memory");
	if (file_read_all("/proc/self/cmdline", &args, &cap, &len) == 0) {
		if (len > 65536) /* the metadata stays small: the first 64 KiB of arguments */
			len = 65536;
		for (size_t i = 0; i < len;) {
			size_t k = strnlen(args + i, len - i);
			char *a = strndup(args + i, k);
			if (!a || json_append(argv, json_new_string(a)) != 0)
				rt_die("ovni record", "out of memory");
			free(a);
			i += k + 1;
		}
	}
	free(args);
	if (json_dotset(t->meta, "record.argv", argv) != 0)
		rt_die("ovni record", "out of memory");
}

/* The loom's CPUs, listed in the stream of the first thread of a process. */
static void add_cpus(struct rt_thread *t)
{
	add_identity(t);
	t->cpus = malloc(state->ncpus * sizeof(*t->cpus));
	if (!t->cpus)
		rt_die("ovni record", "out of memory");
	for (uint32_t i = 0; i < state->ncpus; i++)
		t->cpus[i] = (struct rt_cpu){ (int)i, state->phyid[i] };
	t->ncpus = t->capcpus = state->ncpus;
}

static void end_on_exit(void);

static void proc_begin(int creator, int resume)
{
	atomic_store(&rt_proc.state, RT_UNINIT);
	const char *loom = rt_env("OVNI_RECORD_LOOM");
	const char *app = rt_env("OVNI_RECORD_APPID");
	ovni_proc_init(app ? atoi(app) : 1, loom ? loom : "unknown.0", trace_id(getpid()));
	if (!resume)
		atomic_fetch_add(&state->nprocs, 1);
	thread_begin(creator, 0, resume, 1);
	end_on_exit(); /* the first thread too may leave by pthread_exit */
}

static int env_int(const char *name, int *v)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return -1;
	char *end;
	long n = strtol(s, &end, 10);
	if (*end || n < 0 || n > 0x7fffffff)
		return -1;
	*v = (int)n;
	return 0;
}

/* Rank and size from the launcher: Open MPI, PMIx, PMI, Slurm. */
static void find_rank(void)
{
	static const char *const vars[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
		{ "PMIX_RANK", "PMIX_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" },
		{ "SLURM_PROCID", "SLURM_NTASKS" },
		{ "SLURM_PROCID", "SLURM_NPROCS" },
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int r, n;
		if (env_int(vars[i][0], &r) == 0 && env_int(vars[i][1], &n) == 0 && n > 0 && r < n) {
			has_rank = 1;
			rank = r;
			nranks = n;
			return;
		}
	}
}

/* After MPI_Init: the rank for this thread and the threads created later. */
void rt_record_set_rank(int r, int n)
{
	has_rank = 1;
	rank = r;
	nranks = n;
	struct rt_thread *t = &rt_self;
	if (t->ready && (!t->has_rank || t->rank != r || t->nranks != n)) {
		t->has_rank = 1;
		t->rank = r;
		t->nranks = n;
		rt_meta_changed(t);
	}
}

/* ---- fork ---- */

static __thread int fork_parent_tid;

static void before_fork(void)
{
	fork_parent_tid = rt_self.tid;
}

/* The child is a new process; the parent's stream stays the parent's (its
 * mapping or staging ring was not inherited: MADV_DONTFORK). */
static void after_fork_child(void)
{
	struct rt_thread *t = &rt_self;
	t->stream_open = 0;
	t->win = t->pos = t->end = NULL;
	t->stage = NULL;
	rt_mapper_forked(t);
	t->ready = 0;
	t->slot = -1;
	memset(reg, 0, sizeof(reg));
	id_base = ns_base(getpid() == 1); /* the child of an unshare(CLONE_NEWPID) is in the new one */
	proc_begin(fork_parent_tid, 0);
}

/* The state file's path: the owner of this recording's staging files. */
static char state_path[768];

const char *rt_record_stage_dir(void)
{
	struct stat st;
	if (!state || !state->stage[0] || !state_path[0] || !memchr(state->stage, '\0', sizeof(state->stage)) ||
	    rt_stat(state->stage, &st) != 0 || (uint64_t)st.st_dev != state->stage_dev ||
	    (uint64_t)st.st_ino != state->stage_ino)
		return NULL;
	return state->stage;
}

const char *rt_record_stage_owner(void)
{
	return state_path;
}

int rt_record_clock_get(struct rt_clock *c)
{
	if (!state || atomic_load_explicit(&state->tsc_ready, memory_order_acquire) != 2)
		return 0;
	c->mult = state->tsc_mult;
	c->base_ns = state->tsc_base_ns;
	c->base_tsc = state->tsc_base_tsc;
	return 1;
}

void rt_record_clock_put(const struct rt_clock *c)
{
	uint32_t none = 0;
	if (!state || !atomic_compare_exchange_strong(&state->tsc_ready, &none, 1))
		return;
	state->tsc_mult = c->mult;
	state->tsc_base_ns = c->base_ns;
	state->tsc_base_tsc = c->base_tsc;
	atomic_store_explicit(&state->tsc_ready, 2, memory_order_release);
}

/* ---- Start and end ---- */

static struct rt_state *map_state(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = mmap(NULL, sizeof(struct rt_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	struct rt_state *s = p;
	if (s->magic != RT_STATE_MAGIC || s->ncpus == 0 || s->ncpus > RT_STATE_MAXCPU) {
		munmap(p, sizeof(*s));
		return NULL;
	}
	return s;
}

/* RT_ENV_RESUME=pid.tid: this image replaced one that was traced. */
static int resuming(void)
{
	char *s = rt_env_take_resume();
	if (!s)
		return 0;
	int pid = 0, tid = 0;
	int r = sscanf(s, "%d.%d", &pid, &tid) == 2 && pid == trace_id(getpid()) && tid == trace_id(rt_gettid());
	free(s);
	return r;
}

__attribute__((constructor)) static void record_start(void)
{
	const char *path = rt_env(RT_ENV_FIRST);
	if (!path || !*path)
		return;
	if (rt_instr_is_launcher())
		return;
	errno = 0;
	state = map_state(path);
	if (state && strlen(path) < sizeof(state_path))
		memcpy(state_path, path, strlen(path) + 1);
	if (!state && (errno == EACCES || errno == EPERM)) {
		/* it dropped to another user (su, setpriv): nothing it starts
		 * could be traced either, so they get no shim and see none of
		 * the recorder's variables; one line for all of them */
		rt_env_hide();
		rt_warn("ovni record: process %d runs as user %u, who cannot use %s: it and what it starts are not traced\n",
			(int)getpid(), (unsigned)getuid(), path);
		return;
	}
	if (!state) {
		rt_warn("ovni record: cannot use %s; this process is not traced\n", path);
		return;
	}
	rt_record_mode = 1;
	id_base = ns_base(0);
	int resume = resuming(); /* compares ids: after the base */
	if (!resume && getpid() == 1) /* the first traced process of a new namespace */
		id_base = ns_base(1);
	rt_env_hide();
	find_rank();
	proc_begin(-1, resume);
	pthread_atfork(before_fork, NULL, after_fork_child);
}

/* The other threads of the process end at clock (0: they go on, after
 * all): the recorder ends their streams there, not as cut ones. */
static void others_end_at(uint64_t clock)
{
	int self = trace_id(rt_gettid());
	for (int i = 0; i < MAXREG; i++) {
		int tid = atomic_load(&reg[i].tid);
		if (tid > 0 && tid != self && reg[i].slot >= 0)
			atomic_store(&state->streams[reg[i].slot].exited, clock);
	}
}

/* The process exits: the calling thread ends, and the threads still
 * running end with the process, now. Their streams are cut here; `ovni
 * record` ends them afterwards at this clock (or at their last event, if
 * later), as threads that ran to the process's end. Not in a vfork child,
 * whose exit ends none of its parent's threads. */
static void process_exit(void)
{
	if (!rt_record_mode || trace_id(getpid()) != rt_proc.pid)
		return;
	uint64_t now = thread_finish(&rt_self); /* the others end at its OHe */
	others_end_at(now ? now : rt_clock_exact(&rt_self));
}

/* exit() and return from main */
__attribute__((destructor)) static void record_end(void)
{
	process_exit();
}

RT_API void _exit(int status)
{
	process_exit();
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

RT_API void _Exit(int status)
{
	_exit(status);
}

/* ---- pthread_create ---- */

struct start {
	void *(*fn)(void *);
	void *arg;
	int creator;
	uint64_t tag;
};

/* A thread-specific key whose destructor ends the thread: it runs however
 * the thread leaves (return, pthread_exit, cancellation), without the stack
 * unwinding (and libgcc_s) a cleanup attribute would need. */
static pthread_key_t end_key;
static pthread_once_t end_once = PTHREAD_ONCE_INIT;

static void end_thread(void *t)
{
	thread_finish(t);
	rt_thread_after_end(t);
	rt_thread_release(t);
}

static void make_end_key(void)
{
	pthread_key_create(&end_key, end_thread);
}

/* From now on, however the calling thread leaves (also the first thread,
 * by pthread_exit), end_thread runs. */
static void end_on_exit(void)
{
	pthread_once(&end_once, make_end_key);
	pthread_setspecific(end_key, &rt_self);
}

static void *thread_main(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	thread_begin(s.creator, s.tag, 0, 0);
	end_on_exit();
	return s.fn(s.arg);
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static create_fn real_create(void)
{
	static create_fn real;
	if (!real)
		real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
	return real;
}

int rt_pthread_create_real(pthread_t *th, void *(*fn)(void *), void *arg)
{
	create_fn real = real_create();
	return real ? real(th, NULL, fn, arg) : EAGAIN;
}

int rt_pthread_join_real(pthread_t th)
{
	static int (*real)(pthread_t, void **);
	if (!real)
		real = (int (*)(pthread_t, void **))rt_instr_next("pthread_join");
	return real(th, NULL);
}

int rt_helper_start(struct rt_helper *h, void *(*fn)(void *), void (*first)(void))
{
	pid_t me = getpid(), owner = atomic_load(&h->pid);
	if (owner == me)
		return 0;
	if (!atomic_compare_exchange_strong(&h->pid, &owner, me))
		return atomic_load(&h->pid) == me ? 0 : -1;
	if (owner != 0) /* a forked child: a stop going on in the parent is not its own */
		atomic_store(&h->stopping, 0);
	if (first)
		first();
	sigset_t old;
	rt_signals_off(&old);
	int r = rt_pthread_create_real(&h->th, fn, NULL);
	rt_signals_on(&old);
	if (r != 0) {
		atomic_store(&h->pid, 0);
		return -1;
	}
	return 1;
}

int rt_helper_running(struct rt_helper *h)
{
	return atomic_load(&h->pid) == getpid();
}

void rt_helper_stop(struct rt_helper *h, void (*wake)(void))
{
	if (!rt_helper_running(h) || atomic_exchange(&h->stopping, 1))
		return;
	if (rt_helper_running(h)) { /* not stopped by the one just before */
		atomic_store(&h->quit, 1);
		wake();
		rt_pthread_join_real(h->th);
		atomic_store(&h->quit, 0);
		atomic_store(&h->pid, 0);
	}
	atomic_store(&h->stopping, 0);
}

RT_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	create_fn real = real_create();
	if (!real)
		return EAGAIN;
	struct rt_thread *t = &rt_self;
	if (!rt_record_mode || !t->ready)
		return real(th, attr, fn, arg);
	struct start *s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	*s = (struct start){ fn, arg, t->tid, atomic_fetch_add(&next_tag, 1) };
	rt_kernel_drain(t);
	uint8_t p[12];
	int cpu = -1;
	memcpy(p, &cpu, 4);
	memcpy(p + 4, &s->tag, 8);
	rt_emit_now(t, "OHC", p, 12);
	int r = real(th, attr, thread_main, s);
	if (r != 0)
		free(s);
	return r;
}

/* ---- Affinity ---- */

/* Thread target (self when NULL or self) now has affinity set: new CPU,
 * the old one given back, and OAs (own) or OAr (another thread). */
static void moved(struct rt_thread *target, const cpu_set_t *set)
{
	struct rt_thread *self = &rt_self;
	if (!self->ready || !target || !target->ready)
		return;
	int old = __atomic_load_n(&target->cpu, __ATOMIC_RELAXED);
	int cpu = place(target->tid, set);
	rt_kernel_drain(self);
	uint64_t now = rt_clock_exact(self);
	if (target == self) {
		rt_emit_raw(self, "OAs", now, &cpu, 4);
	} else {
		uint8_t p[8];
		memcpy(p, &cpu, 4);
		memcpy(p + 4, &target->tid, 4);
		rt_emit_raw(self, "OAr", now, p, 8);
	}
	__atomic_store_n(&target->cpu, cpu, __ATOMIC_RELAXED);
	if (cpu != old) {
		rt_clock_wait_past(now);
		release(old, target->tid);
	}
}

/* Only the first size bytes of the mask are the caller's. */
static void copy_set(cpu_set_t *dst, size_t size, const cpu_set_t *src)
{
	CPU_ZERO(dst);
	memcpy(dst, src, size < sizeof(*dst) ? size : sizeof(*dst));
}

typedef int (*setaff_fn)(pid_t, size_t, const cpu_set_t *);

RT_API int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
	static setaff_fn real;
	if (!real)
		real = (setaff_fn)dlsym(RTLD_NEXT, "sched_setaffinity");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int r = real(pid, size, mask);
	if (r == 0 && rt_record_mode) {
		cpu_set_t set;
		copy_set(&set, size, mask);
		moved(pid == 0 || trace_id(pid) == rt_self.tid ? &rt_self : reg_find(trace_id(pid), NULL), &set);
	}
	return r;
}

typedef int (*pthread_setaff_fn)(pthread_t, size_t, const cpu_set_t *);

RT_API int pthread_setaffinity_np(pthread_t th, size_t size, const cpu_set_t *mask)
{
	static pthread_setaff_fn real;
	if (!real)
		real = (pthread_setaff_fn)dlsym(RTLD_NEXT, "pthread_setaffinity_np");
	if (!real)
		return ENOSYS;
	int r = real(th, size, mask);
	if (r == 0 && rt_record_mode) {
		cpu_set_t set;
		copy_set(&set, size, mask);
		moved(pthread_equal(th, pthread_self()) ? &rt_self : reg_find(0, &th), &set);
	}
	return r;
}

/* ---- exec ---- */


/* Before an exec: this image's part of the thread ends (the stream is
 * complete even if the new image is not traced). 1 if it did. */
static int exec_begin(char *resume, size_t n)
{
	struct rt_thread *t = &rt_self;
	/* A vfork child shares our memory: leave the parent's stream alone. */
	if (!rt_record_mode || !t->ready || !t->automatic || trace_id(getpid()) != rt_proc.pid)
		return 0;
	snprintf(resume, n, RT_ENV_RESUME "=%d.%d", rt_proc.pid, t->tid);
	others_end_at(thread_finish(t)); /* the exec ends them */
	return 1;
}

/* The exec failed: the thread goes on in this image, same stream. */
static void exec_failed(int began)
{
	if (!began)
		return;
	int saved = errno;
	others_end_at(0);
	rt_self.finished = 0;
	thread_begin(-1, 0, 1, 1);
	errno = saved;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

static int exec_env(const char *name, const char *path, char *const argv[], char *const envp[])
{
	execve_fn real = (execve_fn)dlsym(RTLD_NEXT, name);
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	char resume[64];
	int began = exec_begin(resume, sizeof(resume));
	char **e = rt_record_mode ? rt_env_traced(envp, began ? resume : NULL) : NULL;
	int r = real(path, argv, e ? e : envp);
	free(e);
	exec_failed(began);
	return r;
}

RT_API int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_env("execve", path, argv, envp);
}

RT_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_env("execvpe", file, argv, envp);
}

RT_API int execv(const char *path, char *const argv[])
{
	return exec_env("execve", path, argv, environ);
}

RT_API int execvp(const char *file, char *const argv[])
{
	return exec_env("execvpe", file, argv, environ);
}

typedef int (*fexecve_fn)(int, char *const[], char *const[]);

RT_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn real = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	char resume[64];
	int began = exec_begin(resume, sizeof(resume));
	char **e = rt_record_mode ? rt_env_traced(envp, began ? resume : NULL) : NULL;
	int r = real(fd, argv, e ? e : envp);
	free(e);
	exec_failed(began);
	return r;
}

/* execl, execlp, execle: the arguments gathered, then as above. */
static char **gather(const char *arg0, va_list ap, char *const **envp)
{
	va_list cp;
	va_copy(cp, ap);
	size_t n = 1;
	while (va_arg(cp, char *))
		n++;
	va_end(cp);
	char **argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char *const *);
	return argv;
}

/* The exec of a list-form call, its argv from gather() (NULL: out of memory). */
static int exec_gathered(const char *name, const char *path, char **argv, char *const envp[])
{
	if (!argv) {
		errno = ENOMEM;
		return -1;
	}
	int r = exec_env(name, path, argv, envp);
	free(argv);
	return r;
}

RT_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	char **argv = gather(arg, ap, NULL);
	va_end(ap);
	return exec_gathered("execve", path, argv, environ);
}

RT_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	char **argv = gather(arg, ap, NULL);
	va_end(ap);
	return exec_gathered("execvpe", file, argv, environ);
}

RT_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp = NULL;
	va_start(ap, arg);
	char **argv = gather(arg, ap, &envp);
	va_end(ap);
	return exec_gathered("execve", path, argv, envp);
}

/* posix_spawn (and so system() and popen()): the child is a new process;
 * an environment given by the program gets the recorder's variables back. */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

static int spawn(const char *name, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	spawn_fn real = (spawn_fn)dlsym(RTLD_NEXT, name);
	if (!real)
		return ENOSYS;
	char **e = rt_record_mode ? rt_env_traced(envp, NULL) : NULL;
	int r = real(pid, path, fa, attr, argv, e ? e : envp);
	free(e);
	return r;
}

RT_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn("posix_spawn", pid, path, fa, attr, argv, envp);
}

RT_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn("posix_spawnp", pid, file, fa, attr, argv, envp);
}
