/* The file `ovni record` shares with every process it records (path in
 * OVNI_RECORD_STATE): the loom's CPUs, which thread runs on each physical
 * CPU (so two never do), counters and the streams created. Mapped
 * MAP_SHARED by the tool and by the shim of each process. */
#ifndef OVNI_RT_STATE_H
#define OVNI_RT_STATE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RT_STATE_MAGIC 0x36647263696e766full /* "ovnircd6" */
#define RT_STATE_MAXCPU 4096
#define RT_STATE_MAXSTREAMS 65536
#define RT_STATE_MAXNS 255 /* pid namespaces other than the recorder's with ids of their own */
#define RT_STATE_NS_SHIFT 22 /* a pid is below 2^22 (the kernel's pid_max limit) */
#define RT_STATE_NS_RETIRED (1ull << 63) /* in pidns_seen: that namespace has ended */

/* A stream: made by the shim when its thread starts; when the thread has
 * ended cleanly (stream cut to its events, final metadata written), the
 * shim stores its events and bytes, then sets done, so that `ovni record`
 * counts it without reading it. An exec'd image that continues a stream
 * clears done until it ends the stream again. */
struct rt_state_stream {
	int32_t pid, tid;
	_Atomic uint32_t done;
	uint32_t unused;
	uint64_t events, bytes;
	/* The stream.json the shim could not write (no descriptor left, say),
	 * for the recorder to write at the end: its text in meta[] of the
	 * state, as offset << 24 | length, and RT_STATE_META_UNFINISHED when
	 * it is the final text of a stream that was not ended (its "finished"
	 * is not true yet); 0 when the file is up to date. */
	_Atomic uint64_t meta;
	/* The clock at which another thread ended the process (exit, _exit, exec)
	 * while this one still ran; 0 if none. Its stream then ends there. */
	_Atomic uint64_t exited;
};

/* The inode of the calling process's pid namespace, 0 without /proc. */
static inline uint64_t rt_state_pidns_now(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	if (n <= 5 || memcmp(link, "pid:[", 5) != 0)
		return 0;
	link[n] = '\0';
	return strtoull(link + 5, NULL, 10);
}

#define RT_STATE_META_BYTES (1u << 20) /* about 500 stream.json; sparse: pages only where used */
#define RT_STATE_META_UNFINISHED (1ull << 63)
#define RT_STATE_META_LEN(m) ((m) & 0xffffffu)
#define RT_STATE_META_OFF(m) (((m) & ~RT_STATE_META_UNFINISHED) >> 24)
_Static_assert(RT_STATE_META_BYTES <= 0xffffffu, "a length must fit in the 24 bits of meta");

struct rt_state {
	uint64_t magic;
	uint32_t ncpus; /* logical index i is physical CPU phyid[i] */
	int32_t phyid[RT_STATE_MAXCPU];
	_Atomic int32_t owner[RT_STATE_MAXCPU]; /* tid running there, 0 = free */
	_Atomic uint32_t nprocs, nthreads;
	_Atomic uint32_t nstreams; /* may exceed RT_STATE_MAXSTREAMS: the rest is lost */
	struct rt_state_stream streams[RT_STATE_MAXSTREAMS];
	/* --kernel (lib/rt/kernel.c) */
	_Atomic uint32_t kernel_refused; /* the notice was printed */
	_Atomic uint32_t kernel_threads; /* threads whose switches are recorded */
	_Atomic uint64_t meta_used; /* bytes of meta[] taken, never given back */
	/* The recorder's pid namespace (its inode; 0: unknown). A process in
	 * another one (a container, unshare --pid) has pids and tids that
	 * another namespace has too: in the trace they are the kernel's plus
	 * (i + 1) << RT_STATE_NS_SHIFT, i its namespace's slot here. */
	uint64_t pidns;
	_Atomic uint64_t pidns_seen[RT_STATE_MAXNS];
	/* The TSC's rate against CLOCK_MONOTONIC (lib/rt/clock.c), measured
	 * by the first process that needed it (a millisecond of spinning),
	 * with its base pair, for the others to take: 0 none, 1 being
	 * written, 2 ready. */
	_Atomic uint32_t tsc_ready;
	uint64_t tsc_mult, tsc_base_ns, tsc_base_tsc;
	/* The recording's staging directory on a memory file system
	 * (lib/trace/stage.h), "" when streams are written through their own
	 * mapped pages. */
	char stage[256];
	uint64_t stage_dev, stage_ino; /* a process that sees another directory there (a container's own /dev/shm) does not stage */
	char meta[RT_STATE_META_BYTES];
};

/* The variables `ovni record` gives every process it records, as a block
 * after the program's own environment, which is left as it is: RT_ENV_FIRST
 * first, then the others that have a value, in this order. The shim takes
 * them at start and cuts the environment where the block begins, so that
 * the program has the one it would have had without the recorder. In the
 * prepended ones the recorder's part comes first, then ':' and the
 * program's own value (which the loader would not read otherwise: it reads
 * the last one). */
#define RT_ENV_FIRST "OVNI_RECORD_STATE"
/* pid.tid, last in the block: a new image (exec) continues the stream of
 * that thread */
#define RT_ENV_RESUME "OVNI_RECORD_RESUME"

struct rt_env_var {
	const char *name;
	int prepend;
};

static const struct rt_env_var rt_env_vars[] = {
	{ RT_ENV_FIRST, 0 },	   { "LD_PRELOAD", 1 },	       { "LD_LIBRARY_PATH", 1 },
	{ "OVNI_RECORD_LOOM", 0 }, { "OVNI_RECORD_APPID", 0 }, { "OVNI_RECORD_KERNEL", 0 },
	{ "OVNI_TRACEDIR", 0 },	   { "OVNI_TMPDIR", 0 },       { "OVNI_EVENTS", 0 },
};

#define RT_ENV_NVARS (sizeof(rt_env_vars) / sizeof(rt_env_vars[0]))

#endif
