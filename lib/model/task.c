#include "model/task.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "base/msg.h"
#include "emu/mchan.h"
#include "base/labelhash.h"
#include "model/breakdown.h"
#include "paraver/pcf.h"

enum {
	TASK_POOL_SLAB = 1024, /* items per pool allocation */
	IDSET_SHIFT = 9, /* 512 ids per chunk */
	IDSET_WORDS = (1 << IDSET_SHIFT) / 64,
	IDSET_BLOCK = 256, /* chunks per allocation */
};

/* ---- pool ---- */

static void pool_init(struct task_pool *p, size_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = size;
}

static void pool_free(struct task_pool *p)
{
	for (size_t i = 0; i < p->nslabs; i++)
		free(p->slabs[i]);
	free(p->slabs);
	pool_init(p, p->size);
}

static void *pool_get(struct task_pool *p)
{
	if (p->free) {
		void *item = p->free;
		memcpy(&p->free, item, sizeof(void *));
		p->nfree--;
		return item;
	}
	if (!p->nslabs || p->slab_used == TASK_POOL_SLAB) {
		char **slabs = realloc(p->slabs, (p->nslabs + 1) * sizeof(*slabs));
		if (!slabs)
			return NULL;
		p->slabs = slabs;
		p->slabs[p->nslabs] = malloc(TASK_POOL_SLAB * p->size);
		if (!p->slabs[p->nslabs])
			return NULL;
		p->nslabs++;
		p->slab_used = 0;
	}
	return p->slabs[p->nslabs - 1] + p->size * p->slab_used++;
}

static void pool_put(struct task_pool *p, void *item)
{
	memcpy(item, &p->free, sizeof(void *));
	p->free = item;
	p->nfree++;
}

/* ---- id set ---- */

void task_idset_init(struct task_idset *s)
{
	memset(s, 0, sizeof(*s));
	u32map_init(&s->chunks);
}

void task_idset_free(struct task_idset *s)
{
	for (size_t i = 0; i < s->nblocks; i++)
		free(s->blocks[i]);
	free(s->blocks);
	u32map_free(&s->chunks);
	task_idset_init(s);
}

int task_idset_has(const struct task_idset *s, uint32_t id)
{
	uint32_t key = id >> IDSET_SHIFT;
	const uint64_t *w = s->last && s->last_key == key ? s->last : u32map_get(&s->chunks, key);
	uint32_t bit = id & ((1u << IDSET_SHIFT) - 1);
	return w && (w[bit / 64] >> (bit % 64) & 1);
}

static uint64_t *idset_new_chunk(struct task_idset *s)
{
	if (!s->nblocks || s->used == IDSET_BLOCK) {
		uint64_t **b = realloc(s->blocks, (s->nblocks + 1) * sizeof(*b));
		if (!b)
			return NULL;
		s->blocks = b;
		s->blocks[s->nblocks] = calloc(IDSET_BLOCK * IDSET_WORDS, sizeof(uint64_t));
		if (!s->blocks[s->nblocks])
			return NULL;
		s->nblocks++;
		s->used = 0;
	}
	return s->blocks[s->nblocks - 1] + IDSET_WORDS * s->used++;
}

int task_idset_add(struct task_idset *s, uint32_t id)
{
	uint32_t key = id >> IDSET_SHIFT;
	uint64_t *w = s->last && s->last_key == key ? s->last : u32map_get(&s->chunks, key);
	if (!w) {
		w = idset_new_chunk(s);
		if (!w || u32map_put(&s->chunks, key, w) != 0)
			return -1;
	}
	s->last_key = key;
	s->last = w;
	uint32_t bit = id & ((1u << IDSET_SHIFT) - 1);
	w[bit / 64] |= (uint64_t)1 << (bit % 64);
	return 0;
}

/* ---- table and types ---- */

void task_table_init(struct task_table *t)
{
	memset(t, 0, sizeof(*t));
	u32map_init(&t->pages);
	task_idset_init(&t->freed);
	u32map_init(&t->types);
	pool_init(&t->task_pool, sizeof(struct task));
	pool_init(&t->body_pool, sizeof(struct body));
	pool_init(&t->page_pool, sizeof(struct task_page));
}

/* What a parallel task owns besides its struct (its live bodies are in
 * the pool). */
static void task_release(struct task *k)
{
	if (k->used_more) {
		task_idset_free(k->used_more);
		free(k->used_more);
		k->used_more = NULL;
	}
}

void task_table_free(struct task_table *t)
{
	/* only parallel tasks own more: no walk over millions of others */
	for (size_t i = 0; t->nparallel && t->pages.slots && i <= t->pages.mask; i++) {
		struct task_page *pg = t->pages.slots[i].val;
		for (size_t j = 0; pg && j < TASK_PAGE; j++)
			if (pg->slot[j] && !(pg->slot[j] & 1))
				task_release((struct task *)pg->slot[j]);
	}
	u32map_free(&t->pages);
	task_idset_free(&t->freed);
	for (size_t i = 0; i < t->ntypes; i++) {
		free(t->type_order[i]->label);
		free(t->type_order[i]);
	}
	free(t->type_order);
	u32map_free(&t->types);
	pool_free(&t->task_pool);
	pool_free(&t->body_pool);
	pool_free(&t->page_pool);
	memset(t, 0, sizeof(*t));
}

static struct {
	void (*fn)(void *arg, const struct task_type *ty);
	void *arg;
} observer;

void task_types_observe(void (*fn)(void *arg, const struct task_type *ty), void *arg)
{
	observer.fn = fn;
	observer.arg = arg;
}

int task_type_declare(struct task_table *t, uint32_t id, const char *label, size_t len)
{
	if (u32map_get(&t->types, id))
		return failf("task type %" PRIu32 " is declared twice in the same process", id);
	if (t->ntypes == t->types_cap) {
		size_t cap = t->types_cap ? t->types_cap * 2 : 16;
		struct task_type **o = realloc(t->type_order, cap * sizeof(*o));
		if (!o)
			return failf("out of memory");
		t->type_order = o;
		t->types_cap = cap;
	}
	struct task_type *ty = calloc(1, sizeof(*ty));
	if (!ty)
		return failf("out of memory");
	if (len == 0) {
		char buf[64];
		snprintf(buf, sizeof(buf), "(unlabeled task type %" PRIu32 ")", id);
		ty->label = strdup(buf);
	} else {
		ty->label = strndup(label, len);
	}
	if (!ty->label || u32map_put(&t->types, id, ty) != 0) {
		free(ty->label);
		free(ty);
		return failf("out of memory");
	}
	ty->id = id;
	ty->value = labelhash_type_value(ty->label);
	t->type_order[t->ntypes++] = ty;
	if (observer.fn)
		observer.fn(observer.arg, ty);
	return 0;
}

const struct task_type *task_type_find(const struct task_table *t, uint32_t id)
{
	return u32map_get(&t->types, id);
}

/* ---- tasks ---- */

static struct task_page_ref *recent_ref(struct task_table *t, uint32_t key)
{
	return &t->recent[(key * 0x9e3779b9u) >> 28];
}

/* The page of id, or NULL; remembered among the recent ones. */
static struct task_page *page_of(struct task_table *t, uint32_t id)
{
	uint32_t key = id >> TASK_PAGE_SHIFT;
	struct task_page_ref *r = recent_ref(t, key);
	if (r->page && r->key == key)
		return r->page;
	struct task_page *pg = u32map_get(&t->pages, key);
	if (pg) {
		r->key = key;
		r->page = pg;
	}
	return pg;
}

/* The struct task of slot i of pg (task id), made from its idle form when
 * needed; NULL when out of memory. */
static struct task *task_of(struct task_table *t, struct task_page *pg, uint32_t id)
{
	size_t i = id & (TASK_PAGE - 1);
	if (!(pg->slot[i] & 1))
		return (struct task *)pg->slot[i];
	struct task *k = pool_get(&t->task_pool);
	if (!k)
		return NULL;
	memset(k, 0, sizeof(*k));
	k->id = id;
	k->flags = pg->idle[i] & ~TASK_IDLE_DEAD;
	k->type = (const struct task_type *)(pg->slot[i] & ~(uintptr_t)1);
	k->body.task = k;
	k->body.id = 1;
	k->body.state = (pg->idle[i] & TASK_IDLE_DEAD) ? BODY_DEAD : BODY_CREATED;
	pg->slot[i] = (uintptr_t)k;
	return k;
}

/* Back to the idle form: a normal task that ended and may run again. */
static void task_idle(struct task_table *t, struct task *k)
{
	struct task_page *pg = page_of(t, k->id);
	size_t i = k->id & (TASK_PAGE - 1);
	pg->slot[i] = (uintptr_t)k->type | 1;
	pg->idle[i] = (uint8_t)(k->flags | TASK_IDLE_DEAD);
	pool_put(&t->task_pool, k);
}

/* The model's events look ids up: page_of remembers the page. */
struct task *task_find(struct task_table *t, uint32_t id)
{
	struct task_page *pg = page_of(t, id);
	if (!pg || !pg->slot[id & (TASK_PAGE - 1)])
		return NULL;
	return task_of(t, pg, id);
}

/* Files task id as slot value v: 1 if the id is taken, -1 when out of
 * memory. */
static int dir_add(struct task_table *t, uint32_t id, uintptr_t v, uint8_t idle)
{
	uint32_t key = id >> TASK_PAGE_SHIFT;
	struct task_page *pg = page_of(t, id);
	if (!pg) {
		pg = pool_get(&t->page_pool);
		if (!pg)
			return -1;
		memset(pg, 0, sizeof(*pg));
		if (u32map_put(&t->pages, key, pg) != 0) {
			pool_put(&t->page_pool, pg);
			return -1;
		}
		struct task_page_ref *r = recent_ref(t, key);
		r->key = key;
		r->page = pg;
	}
	size_t i = id & (TASK_PAGE - 1);
	if (pg->slot[i])
		return 1;
	pg->slot[i] = v;
	pg->idle[i] = idle;
	pg->n++;
	t->ntasks++;
	return 0;
}

/* Unfiles task id (present); its page goes when it was the last one. */
static void dir_del(struct task_table *t, uint32_t id)
{
	struct task_page *pg = page_of(t, id);
	pg->slot[id & (TASK_PAGE - 1)] = 0;
	t->ntasks--;
	if (--pg->n)
		return;
	u32map_del(&t->pages, id >> TASK_PAGE_SHIFT);
	struct task_page_ref *r = recent_ref(t, id >> TASK_PAGE_SHIFT);
	if (r->page == pg)
		r->page = NULL;
	pool_put(&t->page_pool, pg);
}

int task_create(struct task_table *t, uint32_t id, uint32_t type, unsigned flags)
{
	if (task_idset_has(&t->freed, id))
		return failf("task %" PRIu32 " is created twice", id);
	const struct task_type **recent = &t->recent_types[type & 7];
	const struct task_type *ty = *recent;
	if (!ty || ty->id != type) {
		ty = task_type_find(t, type);
		if (!ty)
			return failf("task %" PRIu32 " is created with type %" PRIu32
				     ", which this process has not declared", id, type);
		*recent = ty;
	}
	if (!(flags & TASK_PARALLEL)) {
		/* idle until it runs: no struct task yet */
		int r = dir_add(t, id, (uintptr_t)ty | 1, (uint8_t)flags);
		if (r != 0)
			return r > 0 ? failf("task %" PRIu32 " is created twice", id) : failf("out of memory");
		return 0;
	}
	struct task *k = pool_get(&t->task_pool);
	if (!k)
		return failf("out of memory");
	memset(k, 0, sizeof(*k));
	k->id = id;
	k->flags = flags;
	k->type = ty;
	k->body.task = k;
	k->body.id = 1;
	k->body.state = BODY_CREATED;
	int r = dir_add(t, id, (uintptr_t)k, 0);
	if (r != 0) {
		pool_put(&t->task_pool, k);
		return r > 0 ? failf("task %" PRIu32 " is created twice", id) : failf("out of memory");
	}
	t->nparallel++;
	return 0;
}

const char *body_state_name(int state)
{
	switch (state) {
	case BODY_CREATED: return "Created";
	case BODY_RUNNING: return "Running";
	case BODY_PAUSED: return "Paused";
	case BODY_DEAD: return "Dead";
	default: return "?";
	}
}

const char *body_name(const struct body *b, char *buf, size_t size)
{
	snprintf(buf, size, "body(id=%" PRIu32 ",taskid=%" PRIu32 ")", b->id, b->task->id);
	return buf;
}

/* The task of an event; fails naming what was wrong with the id. */
static struct task *find_live(struct task_table *t, uint32_t id, const char *verb)
{
	struct task_page *pg = page_of(t, id);
	if (pg && pg->slot[id & (TASK_PAGE - 1)]) {
		struct task *k = task_of(t, pg, id);
		if (!k)
			failf("out of memory");
		return k;
	}
	if (task_idset_has(&t->freed, id))
		failf("cannot %s task %" PRIu32 ": it has already ended and cannot run again", verb, id);
	else
		failf("cannot %s task %" PRIu32 ": no such task was created", verb, id);
	return NULL;
}

/* A body id must be 0 for a normal task and > 0 for a parallel one. */
static int check_bodyid(const struct task *k, uint32_t bodyid, const char *verb)
{
	if ((k->flags & TASK_PARALLEL) && bodyid == 0)
		return failf("cannot %s body 0 of parallel task %" PRIu32 ": parallel bodies count from 1",
			     verb, k->id);
	if (!(k->flags & TASK_PARALLEL) && bodyid != 0)
		return failf("cannot %s body %" PRIu32 " of task %" PRIu32
			     ": it is not parallel, its only body is 0", verb, bodyid, k->id);
	return 0;
}

static int stack_push(struct task_stack *s, struct body *b)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct body **nb = realloc(s->b, cap * sizeof(*nb));
		if (!nb)
			return failf("out of memory");
		s->b = nb;
		s->cap = cap;
	}
	s->b[s->n++] = b;
	return 0;
}

/* Whether body b may start running now (state and nesting). */
static int check_execute(struct task_table *t, const struct task_stack *s, const struct body *b)
{
	char n1[64], n2[64];
	const struct task *k = b->task;
	switch (b->state) {
	case BODY_CREATED:
		break;
	case BODY_DEAD:
		if (k->flags & TASK_RESURRECT)
			break;
		return failf("%s has ended and is not allowed to run again", body_name(b, n1, sizeof(n1)));
	case BODY_PAUSED:
		return failf("%s is Paused: it must be resumed, not run again", body_name(b, n1, sizeof(n1)));
	default:
		return failf("%s is already Running: it cannot run again until it ends",
			     body_name(b, n1, sizeof(n1)));
	}
	const struct body *top = task_stack_top(s);
	if (!top || top->state != BODY_RUNNING)
		return 0;
	if (!(k->flags & TASK_RELAX_NESTING))
		return failf("cannot run %s inside %s, which is still running on this thread",
			     body_name(b, n1, sizeof(n1)), body_name(top, n2, sizeof(n2)));
	/* A few lines say it; millions would slow the run down for nothing. */
	if (t->nesting_warnings < TASK_NESTING_WARNINGS)
		msg_warn("deprecated nesting: %s runs inside %s, which is still running",
			 body_name(b, n1, sizeof(n1)), body_name(top, n2, sizeof(n2)));
	else if (t->nesting_warnings == TASK_NESTING_WARNINGS)
		msg_warn("deprecated nesting: more bodies run inside running ones in this process, "
			 "not reported one by one");
	t->nesting_warnings++;
	return 0;
}

/* Whether body id bodyid (> 0) of parallel task k has run. */
static int body_used(const struct task *k, uint32_t bodyid)
{
	if (bodyid <= 64)
		return k->used >> (bodyid - 1) & 1;
	return k->used_more && task_idset_has(k->used_more, bodyid);
}

static int body_set_used(struct task *k, uint32_t bodyid)
{
	if (bodyid <= 64) {
		k->used |= (uint64_t)1 << (bodyid - 1);
		return 0;
	}
	if (!k->used_more) {
		k->used_more = malloc(sizeof(*k->used_more));
		if (!k->used_more)
			return -1;
		task_idset_init(k->used_more);
	}
	return task_idset_add(k->used_more, bodyid);
}

static void body_unlink(struct task *k, struct body *b)
{
	struct body **p = &k->live;
	while (*p != b)
		p = &(*p)->next;
	*p = b->next;
}

static int execute_parallel(struct task_table *t, struct task_stack *s, struct task *k, uint32_t bodyid)
{
	for (struct body *b = k->live; b; b = b->next)
		if (b->id == bodyid)
			return check_execute(t, s, b); /* always fails: a live body is running or paused */
	if (body_used(k, bodyid)) {
		struct body dead = { .task = k, .id = bodyid, .state = BODY_DEAD };
		return check_execute(t, s, &dead);
	}
	struct body fresh = { .task = k, .id = bodyid, .state = BODY_CREATED };
	if (check_execute(t, s, &fresh) != 0)
		return -1;
	struct body *b = pool_get(&t->body_pool);
	if (!b)
		return failf("out of memory");
	if (body_set_used(k, bodyid) != 0) {
		pool_put(&t->body_pool, b);
		return failf("out of memory");
	}
	*b = fresh;
	if (stack_push(s, b) != 0) {
		pool_put(&t->body_pool, b);
		return -1;
	}
	b->next = k->live;
	k->live = b;
	b->state = BODY_RUNNING;
	return 0;
}

int task_execute(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid)
{
	struct task *k = find_live(t, id, "run");
	if (!k || check_bodyid(k, bodyid, "run") != 0)
		return -1;
	if (k->flags & TASK_PARALLEL)
		return execute_parallel(t, s, k, bodyid);
	if (check_execute(t, s, &k->body) != 0 || stack_push(s, &k->body) != 0)
		return -1;
	k->body.state = BODY_RUNNING;
	return 0;
}

/* The top body of the thread, which must be body bodyid of task id in
 * state want. */
static struct body *top_body(struct task_table *t, const struct task_stack *s, uint32_t id,
			     uint32_t bodyid, int want, const char *verb)
{
	char n1[64];
	/* usually the task on top: no lookup in a table of millions */
	struct body *top = task_stack_top(s);
	if (top && top->task->id == id && top->state == want &&
	    bodyid == ((top->task->flags & TASK_PARALLEL) ? top->id : 0))
		return top;
	struct task *k = top && top->task->id == id ? top->task : find_live(t, id, verb);
	if (!k || check_bodyid(k, bodyid, verb) != 0)
		return NULL;
	uint32_t internal = (k->flags & TASK_PARALLEL) ? bodyid : 1;
	struct body *b = task_stack_top(s);
	if (!b) {
		failf("cannot %s task %" PRIu32 ": this thread runs no task", verb, id);
		return NULL;
	}
	if (b->task != k || b->id != internal) {
		failf("cannot %s task %" PRIu32 " body %" PRIu32 ": the innermost body of this thread is %s",
		      verb, id, internal, body_name(b, n1, sizeof(n1)));
		return NULL;
	}
	if (b->state != want) {
		failf("cannot %s %s: it is %s, not %s", verb, body_name(b, n1, sizeof(n1)),
		      body_state_name(b->state), body_state_name(want));
		return NULL;
	}
	return b;
}

int task_pause(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid)
{
	char n1[64];
	struct body *b = top_body(t, s, id, bodyid, BODY_RUNNING, "pause");
	if (!b)
		return -1;
	if (!(b->task->flags & TASK_PAUSE))
		return failf("%s is not allowed to pause", body_name(b, n1, sizeof(n1)));
	b->state = BODY_PAUSED;
	return 0;
}

int task_resume(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid)
{
	struct body *b = top_body(t, s, id, bodyid, BODY_PAUSED, "resume");
	if (!b)
		return -1;
	b->state = BODY_RUNNING;
	return 0;
}

int task_end(struct task_table *t, struct task_stack *s, uint32_t id, uint32_t bodyid)
{
	struct body *b = top_body(t, s, id, bodyid, BODY_RUNNING, "end");
	if (!b)
		return -1;
	struct task *k = b->task;
	s->n--;
	b->state = BODY_DEAD;
	if (k->flags & TASK_PARALLEL) {
		body_unlink(k, b);
		pool_put(&t->body_pool, b);
		return 0;
	}
	if (k->flags & TASK_RESURRECT) {
		task_idle(t, k);
		return 0;
	}
	/* It can never run again: keep only its id. */
	if (task_idset_add(&t->freed, id) != 0)
		return failf("out of memory");
	dir_del(t, id);
	pool_put(&t->task_pool, k);
	return 0;
}

/* ---- stacks ---- */

void task_stack_init(struct task_stack *s)
{
	memset(s, 0, sizeof(*s));
}

void task_stack_free(struct task_stack *s)
{
	free(s->b);
	task_stack_init(s);
}

/* ---- values for the .pcf ---- */

void task_values_init(struct task_values *v)
{
	u32map_init(&v->labels);
}

void task_values_free(struct task_values *v)
{
	u32map_free(&v->labels);
}

int task_values_add(struct task_values *v, const struct task_type *ty)
{
	const char *have = u32map_get(&v->labels, ty->value);
	if (have) {
		if (strcmp(have, ty->label) == 0)
			return 0;
		return failf("task types \"%s\" and \"%s\" get the same Paraver value %" PRIu32
			     " (label hash collision): rename one", have, ty->label, ty->value);
	}
	if (u32map_put(&v->labels, ty->value, ty->label) != 0)
		return failf("out of memory");
	return 1;
}

int task_types_label(const struct task_table *procs, size_t nprocs, const struct mchan *ch, size_t ch_type,
		     struct breakdown *bd, int skip_clashes)
{
	struct task_values seen;
	task_values_init(&seen);
	int rc = 0;
	for (size_t p = 0; p < nprocs && rc == 0; p++) {
		const struct task_table *tt = &procs[p];
		for (size_t i = 0; i < task_type_count(tt) && rc == 0; i++) {
			const struct task_type *ty = task_type_at(tt, i);
			int r = task_values_add(&seen, ty);
			if (r < 0) {
				if (!skip_clashes)
					rc = -1;
			} else if (r > 0) {
				if (pcf_add_value(ch->th_pcf[ch_type], ty->value, ty->label) != 0 ||
				    pcf_add_value(ch->cpu_pcf[ch_type], ty->value, ty->label) != 0 ||
				    breakdown_add_value(bd, ty->value, ty->label) != 0)
					rc = -1;
			}
		}
	}
	task_values_free(&seen);
	return rc;
}

void task_tables_free(struct task_table *procs, size_t nprocs, struct task_stack *stacks, size_t nthreads)
{
	for (size_t i = 0; procs && i < nprocs; i++)
		task_table_free(&procs[i]);
	for (size_t i = 0; stacks && i < nthreads; i++)
		task_stack_free(&stacks[i]);
	free(procs);
	free(stacks);
}
