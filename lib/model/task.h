/* Tasks and their bodies, shared by the nanos6, nosv and openmp models
 * (spec emu.md 4.3). A task has an id, a type and flags; running it is
 * running one of its bodies: Created -> Running <-> Paused -> Dead. Each
 * thread keeps a stack of the bodies it runs: execute pushes, pause, resume
 * and end act on the top one. A parallel task (nosv) has many bodies, one
 * per body id > 0; the others have one body, id 1.
 *
 * Memory: only what can still be referenced is kept. A task that can never
 * run again is freed when its body ends (only its id is remembered, in a
 * bitmap, to refuse creating it twice); so are the bodies of parallel
 * tasks. Types stay until the end (their labels go to the .pcf). A task
 * that may run again (nosv normal tasks: no event says they are gone) is
 * kept in its page of ids with its type alone (see task_page). A parallel
 * task keeps which body ids ran in one word (ids 1-64; an id set only past
 * that) and a list of its live bodies: no allocation of its own.
 *
 * Every operation returns 0, or -1 after failf() with the reason. The model
 * updates its channels from task_stack_top() afterwards. */
#ifndef OVNI_MODEL_TASK_H
#define OVNI_MODEL_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "base/u32map.h"

/* Per task, chosen by the model at creation. */
enum task_flag {
	TASK_PARALLEL = 1u << 0, /* many bodies, ids > 0, each runs once (nosv VTC) */
	TASK_RESURRECT = 1u << 1, /* may run again after ending (nosv, openmp) */
	TASK_PAUSE = 1u << 2, /* may pause (nanos6, nosv normal tasks) */
	TASK_RELAX_NESTING = 1u << 3, /* may run over a Running body, with a warning (nanos6, openmp) */
	TASK_IDLE_DEAD = 1u << 7, /* in task_page.idle only: the task has ended */
};

enum body_state { BODY_CREATED, BODY_RUNNING, BODY_PAUSED, BODY_DEAD };

#define TASK_NESTING_WARNINGS 10 /* relaxed nestings warned one by one, per process */

struct task_type {
	uint32_t id;
	uint32_t value; /* the Paraver value: labelhash_type_value(label) */
	char *label; /* "(unlabeled task type <id>)" when declared empty */
};

struct task;

struct body {
	struct task *task;
	struct body *next; /* parallel: the next live body of the task */
	uint32_t id; /* 1 for a normal task */
	uint8_t state; /* enum body_state */
};

/* A set of 32-bit ids as a sparse bitmap (512 ids per chunk). */
struct task_idset {
	struct u32map chunks; /* id >> 9 -> uint64_t[8] */
	uint64_t **blocks; /* chunk storage, TASK_IDSET_BLOCK chunks each */
	size_t nblocks, used; /* chunks used in the last block */
	uint32_t last_key; /* the chunk of the last id added (ids mostly grow) */
	uint64_t *last;
};

struct task {
	uint32_t id;
	uint32_t flags; /* enum task_flag */
	const struct task_type *type;
	struct body body; /* the body of a normal task */
	/* parallel tasks: */
	uint64_t used; /* bit i: body id i + 1 has run */
	struct body *live; /* running or paused bodies */
	struct task_idset *used_more; /* body ids over 64 that have run, or NULL */
};

/* Fixed-size items reused through a free list threaded through the free
 * items themselves: no malloc per task, nothing to grow when freeing. */
struct task_pool {
	size_t size; /* of an item, at least a pointer */
	void *free; /* the last freed item; each free item points to the next */
	size_t nfree;
	char **slabs; /* every allocation, TASK_POOL_SLAB items each */
	size_t nslabs, slab_used; /* items handed out from the last slab */
};

/* The tasks of TASK_PAGE consecutive ids (from a multiple of it): they share
 * a page, so creating and running tasks in id order stays in cache (a
 * hash spreading every id misses it on each task of a table of millions).
 * A task that is not running nor paused has no struct task: its slot holds
 * its type pointer | 1 and idle[] its flags and whether it ran (the 2 M
 * ended nosv tasks that may run again cost 9 bytes each). */
enum { TASK_PAGE_SHIFT = 5, TASK_PAGE = 1 << TASK_PAGE_SHIFT };
struct task_page {
	uintptr_t slot[TASK_PAGE]; /* 0: none; struct task *; or type | 1 */
	uint8_t idle[TASK_PAGE]; /* for type | 1: flags | TASK_IDLE_DEAD */
	uint32_t n; /* tasks in slot */
};

/* Recently used pages by a hash of their key: each thread goes through its
 * own run of ids, so one last page would thrash between threads. */
enum { TASK_PAGE_CACHE = 16 };
struct task_page_ref {
	uint32_t key;
	struct task_page *page; /* NULL: empty entry */
};

/* The tasks and task types of one process (ids are per process). */
struct task_table {
	struct u32map pages; /* id >> TASK_PAGE_SHIFT -> struct task_page *, with a task */
	size_t ntasks; /* that may still run */
	size_t nparallel; /* parallel tasks created (they own more to free) */
	struct task_page_ref recent[TASK_PAGE_CACHE];
	struct task_idset freed; /* ids of tasks freed after ending */
	struct u32map types; /* id -> struct task_type * */
	const struct task_type *recent_types[8]; /* of recent creations, by id & 7 (one per worker) */
	uint64_t nesting_warnings; /* relaxed nestings seen (warned up to TASK_NESTING_WARNINGS) */
	struct task_type **type_order; /* in declaration order */
	size_t ntypes, types_cap;
	struct task_pool task_pool; /* struct task */
	struct task_pool body_pool; /* struct body of parallel tasks */
	struct task_pool page_pool; /* struct task_page */
};

/* The bodies one thread is running or has paused, innermost last. */
struct task_stack {
	struct body **b;
	size_t n, cap;
};

void task_table_init(struct task_table *t);
void task_table_free(struct task_table *t);

/* Declares type id with its label (len bytes, not NUL-terminated; empty
 * gives "(unlabeled task type <id>)"). Declaring an id twice fails. */
int task_type_declare(struct task_table *t, uint32_t id, const char *label, size_t len);
const struct task_type *task_type_find(const struct task_table *t, uint32_t id);
/* The declared types, in declaration order. */
static inline size_t task_type_count(const struct task_table *t) { return t->ntypes; }
static inline const struct task_type *task_type_at(const struct task_table *t, size_t i)
{
	return t->type_order[i];
}

/* Hands every type declared from now on, in any table, to fn (NULL: to
 * none): `ovni export` names type values while it streams, before the
 * .pcf gets them at the end. */
void task_types_observe(void (*fn)(void *arg, const struct task_type *ty), void *arg);

/* Creates task id of a declared type; an id already used fails. */
int task_create(struct task_table *t, uint32_t id, uint32_t type, unsigned flags);
/* A task that may still run, or NULL (NULL too when out of memory). */
struct task *task_find(struct task_table *t, uint32_t id);
static inline size_t task_count(const struct task_table *t) { return t->ntasks; }

void task_stack_init(struct task_stack *s);
void task_stack_free(struct task_stack *s);
static inline struct body *task_stack_top(const struct task_stack *s)
{
	return s->n ? s->b[s->n - 1] : NULL;
}
/* The running body on top of the stack, or NULL (none, or it is paused):
 * what the task channels show. */
static inline struct body *task_stack_running(const struct task_stack *s)
{
	struct body *b = task_stack_top(s);
	return b && b->state == BODY_RUNNING ? b : NULL;
}

/* Body bodyid of task id on the thread of stack s. bodyid is 0 for a
 * normal task (nosv passes 0; nanos6 and openmp have none: pass 0) and
 * > 0 for a parallel one. */
int task_execute(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid);
int task_pause(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid);
int task_resume(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid);
/* Ends the top body; frees it, and its task when that can never run again. */
int task_end(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid);

/* Task type values from every process, to list each once in the .pcf and
 * find two labels with the same value. */
struct task_values {
	struct u32map labels; /* value -> const char * label */
};

void task_values_init(struct task_values *v);
void task_values_free(struct task_values *v);
/* 1 if ty's value is new, 0 if already added with the same label, -1 after
 * failf when another label has the same value. */
int task_values_add(struct task_values *v, const struct task_type *ty);

/* Frees the nprocs tables and nthreads stacks and both arrays; NULL arrays are fine. */
void task_tables_free(struct task_table *procs, size_t nprocs, struct task_stack *stacks, size_t nthreads);

struct breakdown;
struct mchan;
/* Labels each type value of the nprocs tables once in the thread and CPU .pcf
 * of channel ch_type and in bd. Two labels on one value fail, unless
 * skip_clashes (a run cut short only needs its labels). */
int task_types_label(const struct task_table *procs, size_t nprocs, const struct mchan *ch, size_t ch_type,
		     struct breakdown *bd, int skip_clashes);

void task_idset_init(struct task_idset *s);
void task_idset_free(struct task_idset *s);
int task_idset_has(const struct task_idset *s, uint32_t id);
/* -1 when out of memory. */
int task_idset_add(struct task_idset *s, uint32_t id);

/* "body(id=1,taskid=7)" into buf, for messages. */
const char *body_name(const struct body *b, char *buf, size_t size);
const char *body_state_name(int state);

#endif
