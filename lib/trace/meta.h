/* stream.json of one stream, interpreted and checked (spec runtime.md 2.3,
 * 2.4: keys, types and per-stream rules). Merging across streams is
 * system.c's job. */
#ifndef OVNI_META_H
#define OVNI_META_H

#include <stddef.h>
#include <stdint.h>

#include "base/json.h"

struct meta_cpu {
	int64_t index, phyid;
};

struct meta_require {
	const char *model; /* points into the json */
	const char *version;
	int v[3];
};

struct stream_meta {
	int is_thread; /* ovni.part == "thread"; other parts are ignored with a warning */
	int64_t tid, pid;
	const char *loom; /* points into the json */
	int has_app_id;
	int64_t app_id;
	int has_rank;
	int64_t rank, nranks;
	int has_cpus; /* ovni.loom_cpus present */
	struct meta_cpu *cpus;
	size_t ncpus;
	int finished; /* ovni.finished == 1 */
	const char *lib_version, *lib_commit;
	struct meta_require *req;
	size_t nreq;
	const struct json *marks; /* ovni.mark, or NULL */
	/* What `ovni record` adds beside "ovni" (the reference ignores it): the
	 * process's executable and arguments, and the context switch records
	 * the kernel dropped for this thread. NULL, NULL, 0 when absent. */
	const char *exe; /* points into the json */
	const struct json *argv; /* an array of strings */
	int64_t kernel_lost;
};

/* Fills m from root. file names stream.json in messages. Returns 0, or -1
 * after a one-line message such as
 * "FILE: line 3, column 5: ovni.tid must be a non-zero integer".
 * With TRACE_REQUIRE_FINISHED (the emulator's needs): ovni.finished must be
 * 1, ovni.require must exist and ovni.app_id must not be 0. Readers (dump,
 * top, sort) pass 0 and so accept what a crashed program left. A stream
 * whose ovni.part is not "thread" only needs version and part; is_thread
 * is then 0 and the caller warns. */
int meta_load(struct stream_meta *m, const struct json *root, const char *file, unsigned trace_flags);
void meta_free(struct stream_meta *m);

#endif
