/* Tasks and bodies (lib/model/task.c) and the u32 map under them: the body
 * state machine, nesting and resurrection per flag, parallel bodies, task
 * types and their values, and that ended tasks are freed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/msg.h"
#include "base/labelhash.h"
#include "model/task.h"
#include "t.h"
#include "base/u32map.h"

/* The call fails and the reason contains want. */
#define CHECK_FAIL(call, want, what) do { \
	fail_clear(); \
	int rc_ = (call); \
	CHECK(rc_ == -1 && strstr(fail_reason(), (want)), "%s fails: %s", what, fail_reason()); \
	fail_clear(); \
} while (0)

static void test_u32map(void)
{
	enum { N = 20000, KEYS = 5000 };
	static int ref[KEYS]; /* 0 absent, else value */
	static int vals[KEYS + 1];
	struct u32map m;
	u32map_init(&m);
	CHECK(u32map_get(&m, 3) == NULL, "empty map has nothing");
	CHECK(u32map_del(&m, 3) == NULL, "deleting from an empty map");
	unsigned seed = 12345;
	int bad = 0;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		uint32_t k = (seed >> 8) % KEYS;
		/* Keys far apart too, so that high bits matter. */
		uint32_t key = k * 2654435761u;
		if ((seed >> 4) % 3 == 0) {
			void *v = u32map_del(&m, key);
			if ((v == NULL) != (ref[k] == 0))
				bad++;
			ref[k] = 0;
		} else {
			vals[k] = i + 1;
			if (u32map_put(&m, key, &vals[k]) != 0)
				bad++;
			ref[k] = i + 1;
		}
	}
	size_t n = 0;
	for (uint32_t k = 0; k < KEYS; k++) {
		int *v = u32map_get(&m, k * 2654435761u);
		if (ref[k]) {
			n++;
			if (!v || *v != ref[k])
				bad++;
		} else if (v) {
			bad++;
		}
	}
	CHECK_INT(bad, 0, "u32map agrees with a plain array after random puts and deletes");
	CHECK_INT(u32map_count(&m), n, "u32map counts its keys");
	u32map_free(&m);
	int a = 1, b = 2;
	CHECK_INT(u32map_add(&m, 9, &a), 0, "u32map_add adds a new key");
	CHECK_INT(u32map_add(&m, 9, &b), 1, "u32map_add refuses a present key");
	CHECK(u32map_get(&m, 9) == &a, "and leaves its value");
	u32map_free(&m);
}

static void test_idset(void)
{
	struct task_idset s;
	task_idset_init(&s);
	CHECK(!task_idset_has(&s, 0), "empty set");
	uint32_t ids[] = { 0, 1, 511, 512, 4000000000u, 0xffffffffu, 77777 };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		task_idset_add(&s, ids[i]);
	int all = 1;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		all &= task_idset_has(&s, ids[i]);
	CHECK(all, "idset has every added id");
	CHECK(!task_idset_has(&s, 2) && !task_idset_has(&s, 513) && !task_idset_has(&s, 0xfffffffeu),
	      "idset lacks the others");
	/* Many chunks: more than one block of storage. */
	for (uint32_t i = 0; i < 300; i++)
		task_idset_add(&s, i * 1000000u);
	all = 1;
	for (uint32_t i = 0; i < 300; i++)
		all &= task_idset_has(&s, i * 1000000u) && !task_idset_has(&s, i * 1000000u + 2);
	CHECK(all && s.nblocks == 2, "idset over two storage blocks (%zu)", s.nblocks);
	task_idset_free(&s);
}

static void test_types(void)
{
	struct task_table t;
	task_table_init(&t);
	CHECK_INT(task_type_declare(&t, 3, "type-3", 6), 0, "declare type 3");
	const struct task_type *ty = task_type_find(&t, 3);
	CHECK(ty && strcmp(ty->label, "type-3") == 0, "type 3 found with its label");
	CHECK_INT(ty ? ty->value : 0, 115414439, "value of \"type-3\" (spec 4.3)");
	CHECK_FAIL(task_type_declare(&t, 3, "other", 5), "declared twice", "declaring type 3 again");
	CHECK_INT(task_type_declare(&t, 9, "", 0), 0, "declare an unlabeled type");
	ty = task_type_find(&t, 9);
	CHECK_STR(ty ? ty->label : "", "(unlabeled task type 9)", "the label of an unlabeled type");
	CHECK_INT(task_type_declare(&t, 4, "abcdef", 3), 0, "a label is cut at its length");
	CHECK_STR(task_type_find(&t, 4)->label, "abc", "label of type 4");
	CHECK_INT(task_type_count(&t), 3, "three types");
	CHECK(task_type_at(&t, 0)->id == 3 && task_type_at(&t, 1)->id == 9 && task_type_at(&t, 2)->id == 4,
	      "types in declaration order");
	CHECK(task_type_find(&t, 5) == NULL, "type 5 was not declared");
	CHECK_FAIL(task_create(&t, 1, 5, 0), "not declared", "creating a task of an unknown type");
	task_table_free(&t);
}

/* Two labels with the same value, found by trying "c<n>" labels. */
static int find_collision(char *a, char *b, size_t size)
{
	struct u32map seen;
	u32map_init(&seen);
	static uint32_t nums[400000];
	int found = 0;
	for (uint32_t i = 1; i < 400000 && !found; i++) {
		char l[32];
		snprintf(l, sizeof(l), "c%u", i);
		uint32_t v = labelhash_type_value(l);
		uint32_t *other = u32map_get(&seen, v);
		if (other) {
			snprintf(a, size, "c%u", *other);
			snprintf(b, size, "c%u", i);
			found = 1;
		} else {
			nums[i] = i;
			u32map_put(&seen, v, &nums[i]);
		}
	}
	u32map_free(&seen);
	return found;
}

static void test_values(void)
{
	struct task_table p0, p1;
	struct task_values v;
	char a[32], b[32];
	task_table_init(&p0);
	task_table_init(&p1);
	task_values_init(&v);
	task_type_declare(&p0, 1, "same", 4);
	task_type_declare(&p1, 7, "same", 4);
	CHECK_INT(task_values_add(&v, task_type_find(&p0, 1)), 1, "a new value");
	CHECK_INT(task_values_add(&v, task_type_find(&p1, 7)), 0, "the same label from another process");
	CHECK(find_collision(a, b, sizeof(a)), "two labels with the same value exist (%s, %s)", a, b);
	task_type_declare(&p0, 2, a, strlen(a));
	task_type_declare(&p1, 2, b, strlen(b));
	CHECK_INT(task_values_add(&v, task_type_find(&p0, 2)), 1, "first of the colliding labels");
	CHECK_FAIL(task_values_add(&v, task_type_find(&p1, 2)), "collision", "a second label with that value");
	task_values_free(&v);
	task_table_free(&p0);
	task_table_free(&p1);
}

static const char *top_name(const struct task_stack *s, char *buf)
{
	const struct body *b = task_stack_top(s);
	if (!b)
		return "none";
	body_name(b, buf, 64);
	strcat(buf, body_state_name(b->state));
	return buf;
}

static void test_nanos6_like(void)
{
	enum { F = TASK_PAUSE | TASK_RELAX_NESTING };
	struct task_table t;
	struct task_stack s;
	char buf[64];
	task_table_init(&t);
	task_stack_init(&s);
	task_type_declare(&t, 1, "t", 1);
	CHECK_INT(task_create(&t, 1, 1, F), 0, "create task 1");
	CHECK_FAIL(task_create(&t, 1, 1, F), "created twice", "creating task 1 again");
	CHECK_FAIL(task_execute(&t, &s, 2, 0), "no such task", "running a task never created");
	CHECK_FAIL(task_pause(&t, &s, 1, 0), "runs no task", "pausing with nothing running");
	CHECK_FAIL(task_end(&t, &s, 1, 0), "runs no task", "ending with nothing running");
	CHECK_FAIL(task_execute(&t, &s, 1, 3), "not parallel", "a body id on a normal task");
	CHECK_INT(task_execute(&t, &s, 1, 0), 0, "run task 1");
	CHECK_STR(top_name(&s, buf), "body(id=1,taskid=1)Running", "task 1 runs");
	CHECK(task_stack_running(&s) == task_stack_top(&s), "running body shown");
	CHECK_FAIL(task_execute(&t, &s, 1, 0), "already Running", "running task 1 inside itself");
	CHECK_FAIL(task_resume(&t, &s, 1, 0), "not Paused", "resuming a running task");
	CHECK_INT(task_pause(&t, &s, 1, 0), 0, "pause task 1");
	CHECK(task_stack_running(&s) == NULL, "a paused top shows nothing");
	CHECK_FAIL(task_pause(&t, &s, 1, 0), "not Running", "pausing twice");
	CHECK_FAIL(task_end(&t, &s, 1, 0), "not Running", "ending a paused task");
	CHECK_FAIL(task_execute(&t, &s, 1, 0), "must be resumed", "running a paused task");
	/* Nested over a paused body: no warning needed. */
	task_create(&t, 2, 1, F);
	CHECK_INT(task_execute(&t, &s, 2, 0), 0, "run task 2 over paused task 1");
	CHECK_FAIL(task_resume(&t, &s, 1, 0), "innermost body of this thread is body(id=1,taskid=2)",
		   "resuming task 1 under task 2");
	/* Relaxed nesting over a running body: accepted (with a warning). */
	task_create(&t, 3, 1, F);
	CHECK_INT(task_execute(&t, &s, 3, 0), 0, "run task 3 inside running task 2");
	CHECK_INT(s.n, 3, "three bodies stacked");
	CHECK_INT(task_end(&t, &s, 3, 0), 0, "end task 3");
	CHECK_STR(top_name(&s, buf), "body(id=1,taskid=2)Running", "task 2 is on top again");
	CHECK_FAIL(task_execute(&t, &s, 3, 0), "already ended", "running ended task 3 again");
	CHECK_FAIL(task_create(&t, 3, 1, F), "created twice", "creating ended task 3 again");
	CHECK_INT(task_end(&t, &s, 2, 0), 0, "end task 2");
	CHECK_INT(task_resume(&t, &s, 1, 0), 0, "resume task 1");
	CHECK_INT(task_end(&t, &s, 1, 0), 0, "end task 1");
	CHECK_INT(s.n, 0, "stack empty");
	CHECK_INT(task_count(&t), 0, "every ended task is freed");
	task_stack_free(&s);
	task_table_free(&t);
}

static void test_nosv_like(void)
{
	enum { NORMAL = TASK_PAUSE | TASK_RESURRECT };
	struct task_table t;
	struct task_stack s, s2;
	task_table_init(&t);
	task_stack_init(&s);
	task_stack_init(&s2);
	task_type_declare(&t, 100, "t", 1);
	task_create(&t, 1, 100, NORMAL);
	task_create(&t, 2, 100, NORMAL);
	task_execute(&t, &s, 1, 0);
	CHECK_FAIL(task_execute(&t, &s, 2, 0), "cannot run body(id=1,taskid=2) inside body(id=1,taskid=1)",
		   "nesting without relaxed nesting");
	CHECK_INT(task_execute(&t, &s2, 2, 0), 0, "task 2 runs on another thread");
	CHECK_INT(task_end(&t, &s, 1, 0), 0, "end task 1");
	CHECK_INT(task_execute(&t, &s, 1, 0), 0, "task 1 runs again (resurrect)");
	CHECK_INT(task_end(&t, &s, 1, 0), 0, "end task 1 again");
	CHECK_FAIL(task_end(&t, &s, 2, 0), "runs no task", "ending task 2 on the wrong thread");
	CHECK_INT(task_end(&t, &s2, 2, 0), 0, "end task 2 on its thread");
	CHECK_INT(task_count(&t), 2, "resurrectable tasks are kept");

	/* Parallel tasks: bodies by id, each runs once, no pause. */
	task_create(&t, 200, 100, TASK_PARALLEL);
	task_create(&t, 201, 100, TASK_PARALLEL);
	CHECK_FAIL(task_execute(&t, &s, 200, 0), "count from 1", "body 0 of a parallel task");
	CHECK_INT(task_execute(&t, &s, 200, 1), 0, "body 1 of task 200");
	CHECK_INT(task_execute(&t, &s2, 200, 2), 0, "body 2 of task 200 on another thread");
	CHECK_FAIL(task_execute(&t, &s, 201, 2), "cannot run body(id=2,taskid=201) inside body(id=1,taskid=200)",
		   "nesting a parallel body");
	CHECK_FAIL(task_pause(&t, &s, 200, 1), "not allowed to pause", "pausing a parallel body");
	CHECK_FAIL(task_end(&t, &s, 200, 2), "innermost body of this thread is body(id=1,taskid=200)",
		   "ending body 2 on the thread of body 1");
	CHECK_INT(task_end(&t, &s, 200, 1), 0, "end body 1");
	CHECK_INT(task_end(&t, &s2, 200, 2), 0, "end body 2");
	CHECK_FAIL(task_execute(&t, &s, 200, 1), "not allowed to run again", "body 1 again");
	CHECK_INT(task_execute(&t, &s, 200, 3), 0, "body 3 of task 200");
	CHECK_INT(task_end(&t, &s, 200, 3), 0, "end body 3");
	CHECK_INT(t.body_pool.nfree, 2, "ended bodies go back to the pool");
	/* body ids past the inline word of 64 */
	CHECK_INT(task_execute(&t, &s, 200, 64), 0, "body 64 of task 200");
	CHECK_INT(task_execute(&t, &s2, 200, 65), 0, "body 65 on another thread");
	CHECK_FAIL(task_execute(&t, &s, 201, 65), "inside body(id=64,taskid=200)", "nesting over body 64");
	CHECK_INT(task_end(&t, &s, 200, 64), 0, "end body 64");
	CHECK_FAIL(task_execute(&t, &s, 200, 65), "already Running", "body 65 while it runs");
	CHECK_INT(task_end(&t, &s2, 200, 65), 0, "end body 65");
	CHECK_FAIL(task_execute(&t, &s, 200, 65), "not allowed to run again", "body 65 again");
	CHECK_FAIL(task_execute(&t, &s, 200, 64), "not allowed to run again", "body 64 again");
	CHECK_INT(task_execute(&t, &s, 200, 100000), 0, "body 100000");
	CHECK_INT(task_end(&t, &s, 200, 100000), 0, "end body 100000");
	CHECK_FAIL(task_execute(&t, &s, 200, 100000), "not allowed to run again", "body 100000 again");
	CHECK_INT(task_execute(&t, &s, 201, 100000), 0, "body 100000 of task 201: ids are per task");
	CHECK_INT(task_end(&t, &s, 201, 100000), 0, "end it");
	task_stack_free(&s);
	task_stack_free(&s2);
	task_table_free(&t);
}

/* Many tasks, created and ended in waves: memory stays at the live ones. */
static void test_reuse(void)
{
	enum { WAVES = 50, PER = 3000 };
	struct task_table t;
	struct task_stack s;
	task_table_init(&t);
	task_stack_init(&s);
	task_type_declare(&t, 1, "t", 1);
	int bad = 0;
	uint32_t id = 1;
	for (int w = 0; w < WAVES; w++) {
		for (int i = 0; i < PER; i++)
			bad += task_create(&t, id + i, 1, TASK_PAUSE) != 0;
		for (int i = 0; i < PER; i++) {
			bad += task_execute(&t, &s, id + i, 0) != 0;
			bad += task_end(&t, &s, id + i, 0) != 0;
		}
		id += PER;
	}
	CHECK_INT(bad, 0, "%d waves of %d tasks", WAVES, PER);
	CHECK_INT(task_count(&t), 0, "no task left");
	CHECK(t.task_pool.nslabs <= 3, "task structs are reused (%zu slabs)", t.task_pool.nslabs);
	fail_clear();
	CHECK_FAIL(task_create(&t, 77, 1, 0), "created twice", "an id of a freed task");
	task_stack_free(&s);
	task_table_free(&t);
}

/* Tasks that may run again stay, but only running ones have a struct;
 * the pages of freed ids go back, sparse ids included. */
static void test_idle_tasks(void)
{
	enum { N = 20000 };
	struct task_table t;
	struct task_stack s;
	task_table_init(&t);
	task_stack_init(&s);
	task_type_declare(&t, 1, "t", 1);
	int bad = 0;
	for (uint32_t i = 0; i < N; i++) {
		bad += task_create(&t, i * 7, 1, TASK_PAUSE | TASK_RESURRECT) != 0;
		bad += task_execute(&t, &s, i * 7, 0) != 0 || task_end(&t, &s, i * 7, 0) != 0;
	}
	for (uint32_t i = 0; i < N; i += 97)
		bad += task_execute(&t, &s, i * 7, 0) != 0 || task_end(&t, &s, i * 7, 0) != 0;
	CHECK_INT(bad, 0, "%d resurrectable tasks run, some twice", N);
	CHECK_INT(task_count(&t), N, "all kept");
	CHECK_INT(t.task_pool.nslabs, 1, "one struct at a time: a single slab");
	struct task *k = task_find(&t, 7 * 97);
	CHECK(k && k->body.state == BODY_DEAD && k->type->id == 1, "an ended task is found dead, with its type");
	size_t slabs = t.page_pool.nslabs;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t id = 0x80000000u + i * 1000;
		bad += task_create(&t, id, 1, TASK_PAUSE) != 0;
		bad += task_execute(&t, &s, id, 0) != 0 || task_end(&t, &s, id, 0) != 0;
	}
	CHECK_INT(bad, 0, "%d tasks with sparse ids", N);
	CHECK_INT(task_count(&t), N, "the sparse ones are freed");
	CHECK(t.page_pool.nslabs == slabs && t.page_pool.nfree == 1,
	      "each sparse id's page goes back and is reused (%zu slabs, %zu free)", t.page_pool.nslabs,
	      t.page_pool.nfree);
	task_stack_free(&s);
	task_table_free(&t);
}

/* A plain model of the rules, to check task.c on random operations. */
enum { M_TASKS = 24, M_BODIES = 6, M_THREADS = 3, M_DEPTH = 64 };

struct m_body {
	int state; /* enum body_state; -1 = never run */
};

struct m_task {
	int exists, freed;
	unsigned flags;
	struct m_body body[M_BODIES]; /* [0] normal; [1..] parallel by id */
};

struct m_world {
	struct m_task t[M_TASKS];
	int stack[M_THREADS][M_DEPTH][2]; /* task id, body index */
	int depth[M_THREADS];
};

static int m_top_ok(struct m_world *w, int th, int id, int bi, int want)
{
	if (!w->depth[th])
		return 0;
	int *top = w->stack[th][w->depth[th] - 1];
	return top[0] == id && top[1] == bi && w->t[id].body[bi].state == want;
}

static int m_op(struct m_world *w, int op, int th, int id, int bid)
{
	struct m_task *k = &w->t[id];
	if (op == 0) { /* create */
		if (k->exists || k->freed)
			return -1;
		k->exists = 1;
		for (int i = 0; i < M_BODIES; i++)
			k->body[i].state = -1;
		return 0;
	}
	if (!k->exists)
		return -1;
	int par = (k->flags & TASK_PARALLEL) != 0;
	if (par ? bid == 0 : bid != 0)
		return -1;
	int bi = par ? bid : 0;
	struct m_body *b = &k->body[bi];
	if (op == 1) { /* execute */
		int st = b->state < 0 ? BODY_CREATED : b->state;
		if (st == BODY_RUNNING || st == BODY_PAUSED)
			return -1;
		if (st == BODY_DEAD && !(k->flags & TASK_RESURRECT))
			return -1;
		if (w->depth[th]) {
			int *top = w->stack[th][w->depth[th] - 1];
			if (w->t[top[0]].body[top[1]].state == BODY_RUNNING && !(k->flags & TASK_RELAX_NESTING))
				return -1;
		}
		if (w->depth[th] == M_DEPTH)
			return -2; /* the test avoids it */
		w->stack[th][w->depth[th]][0] = id;
		w->stack[th][w->depth[th]][1] = bi;
		w->depth[th]++;
		b->state = BODY_RUNNING;
		return 0;
	}
	int want = op == 3 ? BODY_PAUSED : BODY_RUNNING;
	if (!m_top_ok(w, th, id, bi, want))
		return -1;
	if (op == 2) { /* pause */
		if (!(k->flags & TASK_PAUSE))
			return -1;
		b->state = BODY_PAUSED;
	} else if (op == 3) {
		b->state = BODY_RUNNING;
	} else { /* end */
		w->depth[th]--;
		b->state = BODY_DEAD;
		if (!par && !(k->flags & TASK_RESURRECT)) {
			k->exists = 0;
			k->freed = 1;
		}
	}
	return 0;
}

static void test_random(void)
{
	static const unsigned kinds[] = {
		TASK_PAUSE | TASK_RELAX_NESTING, TASK_PAUSE | TASK_RESURRECT, TASK_PARALLEL, TASK_RESURRECT,
	};
	int bad = 0, ok_ops = 0;
	/* nesting warnings by the hundred: not worth reading */
	fflush(stderr);
	int saved_err = dup(2), devnull = open("/dev/null", O_WRONLY);
	if (devnull >= 0)
		dup2(devnull, 2);
	for (unsigned round = 0; round < 200; round++) {
		struct m_world w;
		struct task_table t;
		struct task_stack s[M_THREADS];
		memset(&w, 0, sizeof(w));
		task_table_init(&t);
		for (int i = 0; i < M_THREADS; i++)
			task_stack_init(&s[i]);
		task_type_declare(&t, 1, "t", 1);
		unsigned seed = round * 7919u + 1;
		for (int i = 0; i < M_TASKS; i++)
			w.t[i].flags = kinds[(i + round) % 4];
		for (int step = 0; step < 400; step++) {
			seed = seed * 1103515245u + 12345u;
			int op = (int)(seed >> 16) % 5, th = (int)(seed >> 8) % M_THREADS;
			int id = (int)(seed >> 20) % M_TASKS;
			int bid = (w.t[id].flags & TASK_PARALLEL) ? (int)(seed >> 4) % M_BODIES : 0;
			if ((seed >> 28) == 0)
				bid = (int)(seed >> 24) % 2; /* sometimes a wrong body id */
			if (op == 1 && w.depth[th] == M_DEPTH)
				continue;
			int want = m_op(&w, op, th, id, bid);
			int got;
			fail_clear();
			switch (op) {
			case 0: got = task_create(&t, (uint32_t)id, 1, w.t[id].flags); break;
			case 1: got = task_execute(&t, &s[th], (uint32_t)id, (uint32_t)bid); break;
			case 2: got = task_pause(&t, &s[th], (uint32_t)id, (uint32_t)bid); break;
			case 3: got = task_resume(&t, &s[th], (uint32_t)id, (uint32_t)bid); break;
			default: got = task_end(&t, &s[th], (uint32_t)id, (uint32_t)bid); break;
			}
			if (got != want) {
				if (!bad)
					printf("#   round %u step %d: op %d thread %d task %d body %d: got %d, want %d (%s)\n",
					       round, step, op, th, id, bid, got, want, fail_reason());
				bad++;
			}
			ok_ops += got == 0;
		}
		for (int th = 0; th < M_THREADS; th++) {
			if (s[th].n != (size_t)w.depth[th])
				bad++;
			for (int i = 0; i < w.depth[th] && (size_t)i < s[th].n; i++)
				if (s[th].b[i]->task->id != (uint32_t)w.stack[th][i][0])
					bad++;
		}
		size_t live = 0;
		for (int i = 0; i < M_TASKS; i++)
			live += w.t[i].exists;
		if (task_count(&t) != live)
			bad++;
		for (int i = 0; i < M_THREADS; i++)
			task_stack_free(&s[i]);
		task_table_free(&t);
	}
	if (saved_err >= 0) {
		dup2(saved_err, 2);
		close(saved_err);
	}
	if (devnull >= 0)
		close(devnull);
	fail_clear();
	CHECK_INT(bad, 0, "random operations agree with a plain model of the rules (%d succeeded)", ok_ops);
}

int main(void)
{
	test_u32map();
	test_idset();
	test_types();
	test_values();
	test_nanos6_like();
	test_nosv_like();
	test_reuse();
	test_idle_tasks();
	test_random();
	return t_done();
}
