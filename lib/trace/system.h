/* The system a trace describes: looms (nodes), processes, threads and CPUs,
 * merged from every stream's metadata with the reference's rules and order
 * (spec emu.md 2.2, runtime.md 2.4). */
#ifndef OVNI_SYSTEM_H
#define OVNI_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct sys_loom;
struct sys_proc;

struct sys_cpu {
	size_t gindex; /* position in system.cpus */
	int64_t index; /* logical index inside the loom; -1 for the virtual CPU */
	int64_t phyid;
	int is_virtual;
	struct sys_loom *loom;
	size_t stream; /* a stream whose ovni.loom_cpus lists it (for messages) */
	char name[64]; /* " CPU <loom gindex>.<phyid>" or "vCPU <loom gindex>.*" */
};

struct sys_thread {
	size_t gindex; /* position in system.threads */
	int64_t tid;
	struct sys_proc *proc;
	size_t stream; /* index in trace.streams */
	char name[64]; /* "TH <appid>.<tid>" */
};

struct sys_proc {
	size_t gindex;
	int64_t pid, app_id;
	int has_rank;
	int64_t rank, nranks;
	struct sys_loom *loom;
	struct sys_thread **threads; /* by tid */
	size_t nthreads;
};

struct sys_loom {
	size_t gindex;
	const char *name; /* ovni.loom */
	char *hostname; /* name up to the first '.' */
	int64_t clock_offset; /* added to every raw clock of its streams */
	struct sys_proc **procs;
	size_t nprocs;
	struct sys_cpu **cpus; /* physical, by phyid */
	size_t ncpus;
	struct sys_cpu *vcpu;
	struct sys_cpu **by_index; /* logical index -> cpu, ncpus entries */
};

struct system {
	struct sys_loom **looms;
	size_t nlooms;
	struct sys_proc **procs; /* global order */
	size_t nprocs;
	struct sys_thread **threads; /* global order: loom, process, tid */
	size_t nthreads;
	struct sys_cpu **cpus; /* each loom's physical CPUs, then its vCPU */
	size_t ncpus;
	struct sys_thread **by_stream; /* trace stream -> thread, NULL for ignored streams */
	int sorted_by_rank; /* looms ordered by rank (else by name) */
	const char *lib_version, *lib_commit; /* of the first thread stream */
	int mixed_versions; /* some thread has another lib version or commit */
};

/* Builds the system from t (opened with TRACE_REQUIRE_FINISHED for emu).
 * Streams that are not threads are left out (by_stream NULL). Returns 0, or
 * -1 after a one-line message naming the stream (or loom) and rule. Like the
 * reference it prints, in this order: a warning on mixed lib versions,
 * "sorting looms by rank|name", then on success "loaded N looms, N
 * processes, N threads and N cpus" (physical CPUs) and "generated with
 * libovni version V commit C" (msg_info, silenced by msg_set_quiet). */
int system_build(struct system *sys, const struct trace *t);
void system_free(struct system *sys);

/* The CPU with logical index idx in loom l; idx -1 is the vCPU. NULL if none. */
struct sys_cpu *system_cpu(const struct sys_loom *l, int64_t idx);
/* A thread by tid in proc p (NULL if none). */
struct sys_thread *system_thread(const struct sys_proc *p, int64_t tid);

#endif
