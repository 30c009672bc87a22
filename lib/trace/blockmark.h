/* The mark `ovni record` writes for a traced thread's blocking calls
 * (lib/rt/block.c): user mark 99, a stack titled "Blocked in" whose value
 * names the call. The shim declares it in the metadata it renders once the
 * thread has blocked; the recorder's salvage declares it for a thread
 * killed before its metadata said so. */
#ifndef OVNI_TRACE_BLOCKMARK_H
#define OVNI_TRACE_BLOCKMARK_H

#include <stdint.h>

#include "base/json.h"

/* The last user mark type: programs number their own from 0 up. */
#define BLOCKMARK_TYPE 99

enum blockmark_call {
	BM_MUTEX = 1,
	BM_MUTEX_TIMED,
	BM_COND,
	BM_COND_TIMED,
	BM_BARRIER,
	BM_JOIN,
	BM_SEM,
	BM_SEM_TIMED,
	BM_RDLOCK,
	BM_WRLOCK,
	BM_SLEEP,
	BM_USLEEP,
	BM_NANOSLEEP,
	BM_CLOCK_NANOSLEEP,
	BM_NCALLS
};

/* Sets ovni.mark.99 of meta (an object) to the declaration: 0, or -1 if
 * memory runs out. */
int blockmark_declare(struct json *meta);
/* Whether meta (an object) declares mark 99 as blockmark_declare does
 * (by its title). */
int blockmark_declared(const struct json *meta);
/* Removes the declaration of mark 99 from meta: 0, or -1 if memory runs
 * out. */
int blockmark_withdraw(struct json *meta);
/* Whether the whole event at e is an OM[ pushing onto mark 99. */
int blockmark_is_push(const uint8_t *e);

#endif
