/* Channels and the bay: write rules, stacks, and the propagation order
 * that fixes the order of Paraver lines written at the same time. */
#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "chan/chan.h"
#include "base/fail.h"
#include "t.h"
#include "tchanlog.h"

/* A dirty callback that copies its channel into another, plus 1. */
static int copy_plus_one(struct chan *c, void *arg)
{
	struct value v = chan_read(c);
	if (!value_is_null(v))
		v.i++;
	return chan_set(arg, v);
}

static void test_single(void)
{
	struct bay bay;
	struct chan a;
	bay_init(&bay);
	chan_init(&a, CHAN_SINGLE, "a");
	bay_add(&bay, &a);
	CHECK(value_is_null(chan_read(&a)), "a new channel reads null");
	CHECK_INT(chan_set(&a, value_int64(5)), 0, "set 5");
	CHECK_INT(a.dirty, 1, "a written channel is dirty");
	fail_clear();
	CHECK_INT(chan_set(&a, value_int64(6)), -1, "writing a dirty channel fails");
	CHECK(strstr(fail_reason(), "channel a") != NULL, "the reason names the channel: %s", fail_reason());
	CHECK_INT(bay_propagate(&bay), 0, "propagate");
	CHECK_INT(a.dirty, 0, "flushed after propagation");
	CHECK_INT(chan_read(&a).i, 5, "value kept");
	fail_clear();
	CHECK_INT(chan_set(&a, value_int64(5)), -1, "writing the last value again fails");
	CHECK(strstr(fail_reason(), "same as the last") != NULL, "reason: %s", fail_reason());
	CHECK_INT(a.dirty, 0, "a refused write leaves the channel clean");

	chan_set_flags(&a, CHAN_IGNORE_DUP);
	CHECK_INT(chan_set(&a, value_int64(5)), 0, "IGNORE_DUP: the same value is accepted");
	CHECK_INT(a.dirty, 0, "IGNORE_DUP: but the channel stays clean");
	struct chan b;
	chan_init(&b, CHAN_SINGLE, "b");
	chan_set_flags(&b, CHAN_ALLOW_DUP);
	bay_add(&bay, &b);
	chan_set(&b, value_null());
	CHECK_INT(b.dirty, 1, "ALLOW_DUP: writing null over null dirties the channel");
	bay_propagate(&bay);

	struct chan d;
	chan_init(&d, CHAN_SINGLE, "d");
	chan_set_flags(&d, CHAN_DIRTY_WRITE);
	bay_add(&bay, &d);
	CHECK_INT(chan_set(&d, value_int64(1)), 0, "DIRTY_WRITE: first write");
	CHECK_INT(chan_set(&d, value_int64(2)), 0, "DIRTY_WRITE: second write in the same step");
	CHECK_INT(bay.q.n, 1, "queued once");
	bay_propagate(&bay);
	CHECK_INT(chan_read(&d).i, 2, "the last write wins");
	fail_clear();
	CHECK_INT(chan_push(&d, value_int64(1)), -1, "push to a single channel fails");
	chan_free(&a);
	chan_free(&b);
	chan_free(&d);
	bay_free(&bay);
}

static void test_stack(void)
{
	struct bay bay;
	struct chan s;
	bay_init(&bay);
	chan_init(&s, CHAN_STACK, "s");
	bay_add(&bay, &s);
	chan_push(&s, value_int64(3));
	bay_propagate(&bay);
	chan_push(&s, value_int64(7));
	bay_propagate(&bay);
	CHECK_INT(chan_read(&s).i, 7, "the value of a stack is its top");
	fail_clear();
	CHECK_INT(chan_pop(&s, value_int64(3)), -1, "popping a value that is not the top fails");
	CHECK(strstr(fail_reason(), "top is 7") != NULL, "reason: %s", fail_reason());
	CHECK_INT(chan_pop(&s, value_int64(7)), 0, "pop the top");
	bay_propagate(&bay);
	CHECK_INT(chan_read(&s).i, 3, "back to the value below");
	CHECK_INT(chan_pop(&s, value_int64(3)), 0, "pop the last");
	bay_propagate(&bay);
	CHECK(value_is_null(chan_read(&s)), "an empty stack reads null");
	fail_clear();
	CHECK_INT(chan_pop(&s, value_int64(3)), -1, "popping an empty stack fails");
	CHECK_INT(chan_push(&s, value_int64(4)), 0, "push after emptying");
	bay_propagate(&bay);
	fail_clear();
	CHECK_INT(chan_push(&s, value_int64(4)), -1, "pushing the value on top again fails (no duplicates)");
	chan_set_flags(&s, CHAN_ALLOW_DUP);
	CHECK_INT(chan_push(&s, value_int64(4)), 0, "ALLOW_DUP: pushing the same value");
	bay_propagate(&bay);
	int rc = 0;
	for (int i = 0; i < CHAN_STACK_MAX && rc == 0; i++) {
		rc = chan_push(&s, value_int64(100 + i));
		bay_propagate(&bay);
	}
	CHECK_INT(rc, -1, "a stack holds at most %d values", CHAN_STACK_MAX);
	chan_set(&s, value_int64(1));
	fail_clear();
	CHECK_INT(chan_set(&s, value_int64(1)), -1, "set on a stack channel fails");
	chan_free(&s);
	bay_free(&bay);
}

static void test_order(void)
{
	struct bay bay;
	struct chan a, b, c, x;
	bay_init(&bay);
	chan_init(&a, CHAN_SINGLE, "a");
	chan_init(&b, CHAN_SINGLE, "b");
	chan_init(&c, CHAN_SINGLE, "c");
	chan_init(&x, CHAN_SINGLE, "x");
	struct chan *all[] = { &a, &b, &c, &x };
	for (int i = 0; i < 4; i++) {
		bay_add(&bay, all[i]);
		chan_on_emit(all[i], log_emit, NULL);
	}
	CHECK(bay_find(&bay, "c") == &c, "channels are found by name");
	CHECK(bay_find(&bay, "nope") == NULL, "an unknown name finds nothing");
	fail_clear();
	struct chan dup;
	chan_init(&dup, CHAN_SINGLE, "a");
	CHECK_INT(bay_add(&bay, &dup), -1, "two channels cannot share a name");
	chan_free(&dup);

	/* a dirty callback of b writes x, which is queued after c */
	chan_on_dirty(&b, copy_plus_one, &x);
	chan_set(&c, value_int64(30));
	chan_set(&b, value_int64(20));
	chan_set(&a, value_int64(10));
	log_buf[0] = '\0';
	CHECK_INT(bay_propagate(&bay), 0, "propagate");
	CHECK_STR(log_buf, "c=30 b=20 a=10 x=21 ", "emits follow the order channels became dirty, derived ones last");
	log_buf[0] = '\0';
	chan_set(&x, value_int64(5));
	chan_set(&b, value_int64(7));
	fail_clear();
	CHECK_INT(bay_propagate(&bay), -1, "a callback writing a dirty channel makes the propagation fail");
	CHECK_INT(bay.q.n, 0, "the queue is emptied anyway");
	for (int i = 0; i < 4; i++)
		chan_free(all[i]);
	bay_free(&bay);
}

/* Channels written before their dirty callbacks are hooked (a model's
 * create, then connect) still run them in the first propagation, in the
 * order the channels became dirty. */
static void test_hook_after_write(void)
{
	struct bay bay;
	struct chan a, b, xa, xb;
	bay_init(&bay);
	chan_init(&a, CHAN_SINGLE, "a");
	chan_init(&b, CHAN_SINGLE, "b");
	chan_init(&xa, CHAN_SINGLE, "xa");
	chan_init(&xb, CHAN_SINGLE, "xb");
	struct chan *all[] = { &a, &b, &xa, &xb };
	for (int i = 0; i < 4; i++) {
		bay_add(&bay, all[i]);
		chan_on_emit(all[i], log_emit, NULL);
	}
	chan_on_dirty(&b, copy_plus_one, &xb);
	chan_set(&a, value_int64(1));
	chan_set(&b, value_int64(2));
	chan_on_dirty(&a, copy_plus_one, &xa);
	log_buf[0] = '\0';
	CHECK_INT(bay_propagate(&bay), 0, "propagate");
	CHECK_STR(log_buf, "a=1 b=2 xa=2 xb=3 ", "a callback hooked after the write runs, in queue order");
	for (int i = 0; i < 4; i++)
		chan_free(all[i]);
	bay_free(&bay);
}

static int log_tag(struct chan *c, void *arg)
{
	(void)c;
	strcat(log_buf, arg);
	return 0;
}

static int fail_cb(struct chan *c, void *arg)
{
	(void)arg;
	return failf("channel %s: refused", c->name);
}

/* Several callbacks on one channel run in the order hooked; a failing one
 * stops the rest. */
static void test_many_callbacks(void)
{
	struct bay bay;
	struct chan a;
	bay_init(&bay);
	chan_init(&a, CHAN_SINGLE, "a");
	bay_add(&bay, &a);
	chan_on_dirty(&a, log_tag, "d1 ");
	chan_on_dirty(&a, log_tag, "d2 ");
	chan_on_emit(&a, log_tag, "e1 ");
	chan_on_emit(&a, log_tag, "e2 ");
	chan_on_emit(&a, log_tag, "e3 ");
	log_buf[0] = '\0';
	chan_set(&a, value_int64(1));
	CHECK_INT(bay_propagate(&bay), 0, "propagate");
	CHECK_STR(log_buf, "d1 d2 e1 e2 e3 ", "dirty then emit callbacks, each in the order hooked");
	chan_on_emit(&a, fail_cb, NULL);
	chan_on_emit(&a, log_tag, "e5 ");
	log_buf[0] = '\0';
	chan_set(&a, value_int64(2));
	fail_clear();
	CHECK_INT(bay_propagate(&bay), -1, "a failing emit callback fails the propagation");
	CHECK_STR(log_buf, "d1 d2 e1 e2 e3 ", "the callbacks after the failing one do not run");
	chan_free(&a);
	bay_free(&bay);
}

int main(void)
{
	test_single();
	test_stack();
	test_order();
	test_hook_after_write();
	test_many_callbacks();
	return t_done();
}
