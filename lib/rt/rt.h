/* Internals of the libovni shim (lib/rt): the process state, the per-thread
 * stream, and the hooks that `ovni record` mode adds. Built as a shared
 * object with the host's glibc compiler, never linked into the tools.
 *
 * Per thread: init (rt_thread_start) -> emit (ovni_ev_emit, inline fast
 * path into a file-backed shared mapping) -> flush/finish (rt_thread_end).
 * Events live in a MAP_SHARED window (a slot of the thread's staging ring,
 * or of stream.obs itself), so whatever was emitted survives a SIGKILL; the
 * window moves forward as it fills (the mapper thread writes the last slot
 * out, or prepares the next window). In record mode, record.c wraps these:
 * thread_begin (stream, placement, OHx), thread_finish (OHe, end, CPU
 * given back; system calls only, as a program's signal handler may exit), and
 * rt_emit_raw for the events the shim emits itself. */
#ifndef OVNI_RT_H
#define OVNI_RT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "base/json.h"
#include "rt/ovni.h"

#define RT_API __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Free bytes the fast path needs: a whole struct ovni_ev (28) plus the 4
 * zero bytes that mark the end of the written events. */
#define RT_SLACK 32
/* Bytes of stream.obs mapped at a time, at most: a thread ends with up to
 * two windows' pages prepared and not filled (8 MiB wasted a fifth of the
 * pages of 4 threads writing 60 MB each). */
#define RT_WINDOW (2u << 20)
/* The first window of a stream: small, since every thread maps and zeroes
 * it (at 256 KiB, most of the cost of a short thread). */
#define RT_FIRST_WINDOW (32u << 10)
/* The second, mapped by the thread itself: as large as the windows were
 * from the first when the first was 256 KiB, so that the mapper has as
 * long to prepare the third (the thread waits for it, and the timer
 * signals of a program with handlers that emit pile up meanwhile). */
#define RT_SECOND_WINDOW (512u << 10)
/* The side buffer: where the events of signal handlers that come in an
 * emit of their thread wait. A handler that blocks emits two, one that
 * blocks again and again more, and on a loaded machine a handler that
 * outlasts its timer's period runs again and again before the emit it
 * interrupted goes on (a fixed 64 KiB lost events 1 CI run in 2). So it
 * is a mapping reserved, not committed, and touched only as far as used. */
#define RT_SIDE_MAX (1u << 30)

enum rt_proc_state { RT_UNINIT, RT_INIT, RT_READY, RT_GONE };

struct rt_cpu {
	int index, phyid;
};

struct rt_proc {
	_Atomic int state;
	int app, pid;
	char loom[OVNI_MAX_HOSTNAME];
	clockid_t clockid;
	char root[PATH_MAX]; /* final trace directory */
	char tmproot[PATH_MAX]; /* OVNI_TMPDIR, or empty */
};

/* A stream file, opened by name for each window and closed again: no
 * descriptor is held that the program could close (a daemon's loop over
 * every descriptor, closefrom) or reuse under us, as with the kernel's
 * rings. dev and ino tell that the name still holds our file. */
struct rt_file {
	char path[PATH_MAX];
	uint64_t dev, ino;
};

/* Where a thread's stream goes: 28 KiB of paths, kept on the heap so that
 * the shim's thread-local block stays small. glibc carves that block out of
 * every thread's stack: a program's thread of 16 KiB must still start. */
struct rt_where {
	char dir[PATH_MAX]; /* where the stream is written */
	char final_dir[PATH_MAX]; /* where it ends (differs with OVNI_TMPDIR) */
	struct rt_file obs; /* its stream.obs */
	char json[PATH_MAX]; /* its stream.json: no path is built on a small stack */
	char spill[PATH_MAX]; /* its kswitch.spill, "" if the path is too long */
	char final_obs[PATH_MAX], final_json[PATH_MAX]; /* in final_dir */
	char stage[PATH_MAX]; /* its staging file while t->stage is mapped */
};

struct rt_thread {
	/* Hot: the free space of the mapped window, the clock anchor. */
	uint8_t *pos, *end;
	/* Set while this thread moves pos (rt_guard_take): an emit of a signal
	 * handler that interrupts it leaves its event in the side buffer, and
	 * the interrupted emit writes it after its own (rt_guard_give). */
	int busy;
	_Atomic uint32_t side_len; /* bytes reserved in the side buffer */
	struct rt_side *_Atomic side; /* mapped by the first handler that needs it */
	_Atomic uint32_t side_lost; /* events that found no room there */
	uint64_t nev; /* events in the stream */
	uint64_t clk_tsc, clk_ns, clk_last;
	uint8_t *win; /* start of the window, file offset win_off */
	uint64_t win_off;
	size_t win_size;
	int stream_open; /* between rt_stream_open and rt_stream_close */
	int lost; /* stream.obs cannot take more (stream.c): events are dropped */
	int ready, finished;
	int tid;
	int automatic; /* record mode owns its lifecycle events (OH*, OA*) */
	int slot; /* its entry in the record state's streams, -1 none */
	int nev_unknown; /* nev is not the stream's count (a resumed stream not read) */
	int was_cut; /* resumed a stream whose thread never ended */
	int was_last; /* rt_thread_end closed the process's last open stream */
	int cpu; /* logical CPU index it runs on in record mode, -1 = vCPU */
	int has_rank, rank, nranks;
	unsigned instr; /* RT_INSTR_* already declared in the metadata (instr.h) */
	struct rt_mreq *mreq; /* the mapper's request for the next window */
	uint8_t *stage; /* the staging file mapped (stage.c), NULL: the stream's own pages */
	int stage_cur; /* its slot being filled */
	struct rt_cpu *cpus;
	size_t ncpus, capcpus;
	struct json *meta; /* stream.json as it is now, without the final keys */
	char *final_json; /* rendered with the final keys, ready for a crash */
	size_t final_len;
	char *final_blk; /* the same with the block mark, while it may come */
	size_t final_blk_len;
	char *final_old; /* final_json before the block mark: freed later */
	struct rt_where *where; /* off the thread-local block (rt_thread_start) */
};

/* The TSC clock (clock.c); window 0 sends every reading to the slow path. */
struct rt_clock {
	uint64_t mult; /* ns per TSC cycle, 32.32 fixed point */
	uint64_t window; /* cycles between re-anchors (100 us) */
	uint64_t base_ns, base_tsc;
	int use_tsc;
};

extern struct rt_proc rt_proc;
extern struct rt_clock rt_clock;
void rt_clock_init(void);
/* Under ovni record, the TSC rate is measured once for the whole
 * recording: get fills c's mult and base pair and returns 1 when
 * another process published them; put publishes c's if none was. */
int rt_record_clock_get(struct rt_clock *c);
void rt_record_clock_put(const struct rt_clock *c);
uint64_t rt_clock_exact(struct rt_thread *t);
void rt_clock_wait_past(uint64_t ns);
extern __thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
/* Nonzero for a model byte that the fast path must not just copy: not
 * selected (dropped) or owned by record mode (checked in the slow path). */
extern uint8_t rt_filter[256];
#define RT_FILTER_DROP 1
#define RT_FILTER_CHECK 2
/* The same per model and category (RT_EMIT_KEY): what ovni_ev_emit tests. */
extern uint8_t rt_emit_filter[1 << 16];
#define RT_EMIT_KEY(model, category) (((unsigned)(uint8_t)(model) << 8) | (uint8_t)(category))

/* Messages as the reference prints them: "FATAL: func: text" then abort. */
void rt_die(const char *func, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
pid_t rt_gettid(void);
int rt_stat(const char *path, struct stat *st); /* stat(2) itself (glibc.h) */
/* Record mode: what the shim creates gets mode itself, not mode less the
 * program's umask (a umask of 0277 must not make a thread's directory one
 * the shim cannot write in). fd >= 0, else path. */
void rt_fix_mode(int fd, const char *path, mode_t mode);
int rt_mkpath(const char *path);
/* Gives the calling helper thread a descriptor table of its own, empty:
 * the files it opens for a moment never take the number that the program's
 * next open() is due (a daemon closing all of its own and opening
 * /dev/null as its stdin, say). Shared as before where the kernel cannot. */
void rt_fds_apart(void);
/* Every signal blocked (the old mask in *old), then put back: a handler
 * that leaves by a long jump never lands in the middle of what is between. */
void rt_signals_off(sigset_t *old);
void rt_signals_on(const sigset_t *old);
/* A write or truncate of this thread failed with err, every signal
 * blocked: a file size limit's SIGXFSZ is taken back unless the program
 * (whose mask is caller) blocks it too. */
void rt_forget_xfsz(int err, const sigset_t *caller);

/* env.c: the recorder's variables, hidden from the program */
void rt_env_hide(void); /* record mode, at start */
char *rt_env_take_resume(void); /* RT_ENV_RESUME's value (malloc'd), once */
/* Our value of one of them (getenv for any other, and before rt_env_hide). */
const char *rt_env(const char *name);
/* envp for a new image: the program's with ours put back, then extra (if
 * not NULL); one malloc'd block, NULL when out of memory. */
char **rt_env_traced(char *const envp[], const char *extra);

/* stream.c */
int rt_stream_open(struct rt_thread *t, int resume);
void rt_stream_grow(struct rt_thread *t, size_t need);
uint64_t rt_stream_used(const struct rt_thread *t);
void rt_stream_close(struct rt_thread *t); /* async-signal-safe */
/* Guarded writes of one event (rt_guard_*): put2 of one in two pieces. */
void rt_stream_put(struct rt_thread *t, const void *data, size_t n);
void rt_stream_put2(struct rt_thread *t, const void *head, size_t nhead, const void *body, size_t nbody);
/* Several events in a row, no handler's in between: hold, put_held...,
 * then rt_guard_give. hold takes the guard even from an emit that holds it
 * (only when that emit never goes on: this handler ends the thread, or
 * t->busy was 0); the handlers' events left over are written first. */
void rt_stream_hold(struct rt_thread *t);
void rt_stream_put_held(struct rt_thread *t, const void *data, size_t n);
void rt_emit_raw(struct rt_thread *t, const char mcv[3], uint64_t clock, const void *payload, size_t n);
/* rt_emit_raw at the clock read once the emit is guarded: a handler's
 * events that come in are then written after it, and are later. */
void rt_emit_now(struct rt_thread *t, const char mcv[3], const void *payload, size_t n);
/* Unmaps t's side buffer, which must be empty or forgotten. */
void rt_side_free(struct rt_thread *t);
/* The events handlers left in the side buffer, after the stream's last
 * one; their clocks raised to floor and to each other's, as a handler's
 * event may be older than the one it interrupted. busy must be set. */
void rt_side_drain(struct rt_thread *t, uint64_t floor);
/* Async-signal-safe. */
void rt_side_late(struct rt_thread *t, uint64_t floor);

/* An emit that finds busy or a side buffer not empty takes the slow path
 * (rt_stream_put): it was called from a handler, or the one before it was
 * interrupted as it ended. */
static inline int rt_guard_busy(const struct rt_thread *t)
{
	return t->busy | (int)atomic_load_explicit(&t->side_len, memory_order_relaxed);
}

static inline void rt_guard_take(struct rt_thread *t)
{
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
}

/* Ends an emit of an event whose clock was read before the emit began
 * (ovni_ev_emit): the handlers' events that came meanwhile are later. */
static inline void rt_guard_give_later(struct rt_thread *t, uint64_t clock)
{
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (RT_UNLIKELY(atomic_load_explicit(&t->side_len, memory_order_relaxed)))
		rt_side_late(t, clock); /* a tail call: the fast path keeps no frame */
}

/* Ends an emit of an event of clock floor: the handlers' events that came
 * meanwhile are written, then again those of one that came as busy was
 * being cleared (it left them there; a later one drains them itself). */
static inline void rt_guard_give(struct rt_thread *t, uint64_t floor)
{
	atomic_signal_fence(memory_order_seq_cst);
	if (RT_UNLIKELY(atomic_load_explicit(&t->side_len, memory_order_relaxed)))
		rt_side_drain(t, floor);
	t->busy = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (RT_UNLIKELY(atomic_load_explicit(&t->side_len, memory_order_relaxed)))
		rt_side_late(t, floor);
}

/* stage.c: the stream written through a ring in a staging file
 * (lib/trace/stage.h) rather than through its own mapped pages; record
 * mode only, when the recorder has a staging directory. */
/* Copies the staging file that a killed thread left for the stream dev.ino
 * into it, before the stream is continued. */
void rt_stage_recover(uint64_t dev, uint64_t ino);
/* The first window of t's stream at used, fd open on it: 0, or -1 when the
 * stream is not staged (then it is mapped). */
int rt_stage_open(struct rt_thread *t, int fd, uint64_t used);
/* The next slot, with room for need bytes at used; the filled one is
 * handed to the mapper to be written. Every signal blocked. 0, the errno
 * of a write that failed (the stream is then lost), or RT_STAGE_FULL: no
 * memory for the next slot (the stream is left as it was). */
int rt_stage_switch(struct rt_thread *t, uint64_t used, size_t need);
#define RT_STAGE_FULL (-1)
/* Writes what the ring still holds (the stream's bytes up to used, where the
 * file then ends) and removes the staging file: 0, or an errno. System
 * calls only. */
int rt_stage_close(struct rt_thread *t, uint64_t used);

void rt_move_files(struct rt_thread *t); /* async-signal-safe */
void rt_move_back(struct rt_thread *t);

/* mapper.c */
/* f opened for writing when its name still holds our file (*st: its
 * status); -1 with errno (ESTALE: another file took the name). System
 * calls only. */
int rt_file_open(const struct rt_file *f, struct stat *st);
/* Zeros over [from, end) of fd, past its end: its pages then exist, and a
 * full disk fails here (-1, errno) rather than as a SIGBUS in a mapping. */
int rt_write_zeros(int fd, uint64_t from, uint64_t end);
void *rt_map_fd(int fd, uint64_t have, uint64_t off, size_t size);
/* size bytes at src into f at off (cut back to off when they do not fit):
 * 0, or an errno. System calls only. */
int rt_write_out(const struct rt_file *f, const void *src, size_t size, uint64_t off);
/* rt_write_out of the stream's last bytes: the file then ends at off + size. */
int rt_write_last(const struct rt_file *f, const void *src, size_t size, uint64_t off);
void *rt_map_pages(const struct rt_file *f, uint64_t off, size_t size);
/* t's request made, at the thread's start (the requests come at window
 * switches, maybe in a signal handler); the mapper started now when no
 * collector can start it at the first switch that wants it. */
void rt_mapper_prepare(struct rt_thread *t);
/* The collector's thread: starts the mapper if a switch wanted it. */
void rt_mapper_start_wanted(void);
/* Starts this process's mapper unless it runs (not in a signal handler:
 * it makes a thread). */
void rt_mapper_start(void);
void rt_mapper_request(struct rt_thread *t, uint64_t off, size_t size, void *drop, size_t drop_size);
void *rt_mapper_take(struct rt_thread *t, uint64_t off, size_t min, size_t *size);
void rt_mapper_quiesce(struct rt_thread *t); /* async-signal-safe */
/* Asks for len bytes at src to be written into t's stream at off, then
 * *done set to STAGE_FREE; written now when no mapper runs. 0, or the
 * errno of that write. */
int rt_mapper_flush(struct rt_thread *t, const void *src, size_t len, uint64_t off, _Atomic uint32_t *done);
/* Waits for t's write in flight: 0, or its errno. Async-signal-safe. */
int rt_mapper_flushed(struct rt_thread *t);
/* In a forked child: t's request in flight was its parent's. */
void rt_mapper_forked(struct rt_thread *t);
/* 1 if this process's mapper thread runs. */
int rt_mapper_running(void);
/* Stops it once the windows asked for are ready (one asked for as it quit
 * is made by the caller); the next request starts another. */
void rt_mapper_stop(void);
/* The shim's threads (mapper, switch collector) end; the mapper starts
 * again at the next window (alone.c). */
void rt_helpers_stop(void);

/* meta.c */
void rt_meta_init(struct rt_thread *t);
void rt_meta_changed(struct rt_thread *t); /* re-render the final text */
/* ovni.require.MODEL = version in t's metadata; rendered at the next
 * rt_meta_changed. */
void rt_require(struct rt_thread *t, const char *model, const char *version);
/* The block mark was declared (instr.h): final_blk becomes the final text,
 * without allocating or freeing (a signal handler that interrupted malloc
 * may be the caller); the disk keeps the older text until the next write. */
void rt_meta_block_declared(struct rt_thread *t);
void rt_meta_write(struct rt_thread *t); /* the current (unfinished) metadata, rank and CPUs included */
void rt_meta_write_final(struct rt_thread *t); /* async-signal-safe */
/* A stream that could not be ended: its final metadata to the recorder,
 * which ends it at its last event. Async-signal-safe. */
void rt_meta_hand_over(struct rt_thread *t);
/* With rank and CPUs but not finished: what a salvage needs if we die. */
void rt_meta_write_progress(struct rt_thread *t);

/* api.c: OVNI_EVENTS into rt_filter (ovni_proc_init). */
void rt_select_events(void);
/* api.c: the thread part of ovni_thread_init / ovni_thread_free. The
 * caller renders the metadata (rt_meta_changed) once it has set it. */
void rt_thread_start(struct rt_thread *t, int tid, int resume);
void rt_thread_end(struct rt_thread *t);
/* After rt_thread_end, outside a signal handler: if it closed the
 * process's last stream, the shim's threads end, so that glibc ends the
 * process when the program's last thread ends, as it would without them
 * (not checked against /proc/self/task: a first thread that left by
 * pthread_exit stays listed there, a zombie, until the process ends). */
void rt_thread_after_end(struct rt_thread *t);
void rt_thread_release(struct rt_thread *t); /* frees: not in a signal handler */
void rt_emit_slow(struct rt_thread *t, struct ovni_ev *ev);

/* record.c: record mode; 1 if an event of the ovni model must be dropped
 * because record mode emits that kind itself for this thread. */
int rt_record_owns(const struct rt_thread *t, const struct ovni_ev *ev);
/* The stream.json text s of t, which could not be written, for the
 * recorder to write at the end (unfinished: s is the final text of a
 * stream that was not ended); with s NULL: the file is up to date. 0 if
 * handed over, -1 if not (not recording, no room). Async-signal-safe. */
int rt_record_meta_spill(const struct rt_thread *t, const char *s, size_t len, int unfinished);
/* pthread_create and pthread_join themselves, not the recording wrappers. */
int rt_pthread_create_real(pthread_t *th, void *(*fn)(void *), void *arg);
int rt_pthread_join_real(pthread_t th);

/* One thread of the shim per process (the mapper, the switch collector):
 * started once, again in a forked child, with every signal blocked (they
 * are the program's); stopped by setting quit, which its loop checks after
 * wake(). */
struct rt_helper {
	_Atomic pid_t pid; /* the process where it runs */
	pthread_t th;
	_Atomic uint32_t quit; /* a futex word the helper may sleep on */
	_Atomic int stopping; /* one rt_helper_stop at a time joins it */
};
/* 1 if this call started it (first calling first(), if not NULL, before
 * the thread exists), 0 if it ran already, -1 if it cannot run. */
int rt_helper_start(struct rt_helper *h, void *(*fn)(void *), void (*first)(void));
int rt_helper_running(struct rt_helper *h);
/* Sets quit, calls wake, waits for the thread to end; a call while
 * another stops it returns at once. */
void rt_helper_stop(struct rt_helper *h, void (*wake)(void));
extern int rt_record_mode;
/* The recording's staging directory (lib/record/state.h), NULL if none. */
const char *rt_record_stage_dir(void);
/* The recording's state file, which owns the staging files. */
const char *rt_record_stage_owner(void);

#endif
