/* Muxes and tracks: what thread and CPU rows show of a model channel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/bay.h"
#include "chan/chan.h"
#include "base/fail.h"
#include "chan/mux.h"
#include "chan/track.h"
#include "t.h"
#include "tchanlog.h"

static int count_emit(struct chan *c, void *arg)
{
	(void)c;
	++*(int *)arg;
	return 0;
}

static void step(struct bay *bay)
{
	log_buf[0] = '\0';
	if (bay_propagate(bay) != 0)
		strcat(log_buf, "FAILED");
}

static void test_mux(void)
{
	struct bay bay;
	struct chan sel, in0, in1, out;
	bay_init(&bay);
	chan_init(&sel, CHAN_SINGLE, "sel");
	chan_init(&in0, CHAN_SINGLE, "in0");
	chan_init(&in1, CHAN_SINGLE, "in1");
	chan_init(&out, CHAN_SINGLE, "out");
	struct chan *all[] = { &sel, &in0, &in1, &out };
	for (int i = 0; i < 4; i++)
		bay_add(&bay, all[i]);
	chan_on_emit(&out, log_emit, NULL);
	struct mux m;
	CHECK_INT(mux_init(&m, &sel, &out, NULL, 2), 0, "mux_init");
	mux_set_input(&m, 0, &in0);
	mux_set_input(&m, 1, &in1);
	mux_set_default(&m, value_int64(99));

	chan_set(&in0, value_int64(10));
	chan_set(&in1, value_int64(11));
	step(&bay);
	CHECK_STR(log_buf, "", "nothing selected yet: inputs do not reach the output");
	chan_set(&sel, value_int64(1));
	step(&bay);
	CHECK_STR(log_buf, "out=11 ", "select 1 shows input 1");
	chan_set(&in0, value_int64(20));
	step(&bay);
	CHECK_STR(log_buf, "", "a change of an input not selected is not forwarded");
	chan_set(&in1, value_int64(21));
	step(&bay);
	CHECK_STR(log_buf, "out=21 ", "a change of the selected input is forwarded");
	chan_set(&sel, value_null());
	step(&bay);
	CHECK_STR(log_buf, "out=99 ", "null selects nothing: the output holds the default");
	chan_set(&sel, value_int64(0));
	chan_set(&in0, value_int64(30));
	step(&bay);
	CHECK_STR(log_buf, "out=30 ", "select and input changing together give one line with the new value");
	chan_set(&sel, value_int64(5));
	step(&bay);
	CHECK(strstr(log_buf, "FAILED") != NULL, "a select value with no input is an error");
	mux_free(&m);
	for (int i = 0; i < 4; i++)
		chan_free(all[i]);
	bay_free(&bay);
}

static void test_tracks(void)
{
	struct bay bay;
	struct chan state[2], raw[2], th_running;
	struct track tt[2], tc;
	bay_init(&bay);
	for (int i = 0; i < 2; i++) {
		char n[32];
		snprintf(n, sizeof(n), "thread%d.state", i);
		chan_init(&state[i], CHAN_SINGLE, n);
		snprintf(n, sizeof(n), "m.thread%d.x", i);
		chan_init(&raw[i], CHAN_STACK, n);
		bay_add(&bay, &state[i]);
		bay_add(&bay, &raw[i]);
	}
	chan_init(&th_running, CHAN_SINGLE, "cpu0.th_running");
	bay_add(&bay, &th_running);
	CHECK_INT(track_thread(&tt[0], &bay, TRACK_RUN, &state[0], &raw[0]), 0, "thread track RUN");
	CHECK_INT(track_thread(&tt[1], &bay, TRACK_ACT, &state[1], &raw[1]), 0, "thread track ACT");
	CHECK_STR(tt[0].output->name, "m.thread0.x.run", "RUN output name");
	CHECK_STR(tt[1].output->name, "m.thread1.x.act", "ACT output name");
	struct chan *raws[2] = { &raw[0], &raw[1] };
	CHECK_INT(track_cpu(&tc, &bay, &th_running, raws, 2, 10, "m.cpu0.x.run"), 0, "cpu track");
	chan_on_emit(tt[0].output, log_emit, NULL);
	chan_on_emit(tt[1].output, log_emit, NULL);
	chan_on_emit(tc.output, log_emit, NULL);

	struct track any;
	CHECK_INT(track_thread(&any, &bay, TRACK_ANY, &state[0], &raw[0]), 0, "thread track ANY");
	CHECK(any.output == &raw[0], "ANY shows the raw channel itself");

	chan_push(&raw[0], value_int64(7));
	chan_push(&raw[1], value_int64(8));
	step(&bay);
	CHECK_STR(log_buf, "", "threads in unknown state show nothing");
	chan_set(&state[0], value_int64(TH_ST_RUNNING));
	chan_set(&state[1], value_int64(TH_ST_COOLING));
	chan_set(&th_running, value_int64(10));
	step(&bay);
	CHECK_STR(log_buf, "m.thread0.x.run=7 m.thread1.x.act=8 m.cpu0.x.run=7 ",
		  "running thread shows on RUN, cooling on ACT, CPU shows its running thread");
	chan_set(&state[0], value_int64(TH_ST_PAUSED));
	chan_set(&state[1], value_int64(TH_ST_PAUSED));
	chan_set(&th_running, value_null());
	step(&bay);
	CHECK_STR(log_buf, "m.thread0.x.run=null m.thread1.x.act=null m.cpu0.x.run=null ",
		  "paused threads and an idle CPU show null");
	chan_push(&raw[1], value_int64(9));
	step(&bay);
	CHECK_STR(log_buf, "", "changes while paused are hidden");
	chan_set(&state[1], value_int64(TH_ST_WARMING));
	chan_set(&th_running, value_int64(11));
	step(&bay);
	CHECK_STR(log_buf, "m.thread1.x.act=9 m.cpu0.x.run=9 ",
		  "warming is active; the CPU follows the thread it runs");
	chan_pop(&raw[1], value_int64(9));
	step(&bay);
	CHECK_STR(log_buf, "m.thread1.x.act=8 m.cpu0.x.run=8 ", "a pop shows on both rows");
	track_free(&tt[0]);
	track_free(&tt[1]);
	track_free(&tc);
	track_free(&any);
	for (int i = 0; i < 2; i++) {
		chan_free(&state[i]);
		chan_free(&raw[i]);
	}
	chan_free(&th_running);
	bay_free(&bay);
}

/* Two muxes over the same input channel: a change reaches only the muxes
 * picking it, in the order the muxes were set up, whatever the picks' order. */
static void test_shared_input(void)
{
	struct bay bay;
	struct chan sa, sb, in, oa, ob;
	bay_init(&bay);
	chan_init(&sa, CHAN_SINGLE, "sa");
	chan_init(&sb, CHAN_SINGLE, "sb");
	chan_init(&in, CHAN_SINGLE, "in");
	chan_init(&oa, CHAN_SINGLE, "oa");
	chan_init(&ob, CHAN_SINGLE, "ob");
	struct chan *all[] = { &sa, &sb, &in, &oa, &ob };
	for (int i = 0; i < 5; i++)
		bay_add(&bay, all[i]);
	chan_on_emit(&oa, log_emit, NULL);
	chan_on_emit(&ob, log_emit, NULL);
	struct mux a, b;
	mux_init(&a, &sa, &oa, NULL, 1);
	mux_set_input(&a, 0, &in);
	mux_init(&b, &sb, &ob, NULL, 1);
	mux_set_input(&b, 0, &in);
	chan_set(&sb, value_int64(0));
	step(&bay);
	chan_set(&sa, value_int64(0));
	step(&bay);
	chan_set(&in, value_int64(4));
	step(&bay);
	CHECK_STR(log_buf, "oa=4 ob=4 ", "both muxes pick the input: set-up order, not pick order");
	chan_set(&sa, value_null());
	step(&bay);
	chan_set(&in, value_int64(5));
	step(&bay);
	CHECK_STR(log_buf, "ob=5 ", "a mux that stopped picking the input no longer follows it");
	chan_set(&sa, value_int64(0));
	chan_set(&sb, value_null());
	step(&bay);
	CHECK_STR(log_buf, "oa=5 ob=null ", "picks can move between muxes");
	mux_free(&a);
	mux_free(&b);
	for (int i = 0; i < 5; i++)
		chan_free(all[i]);
	bay_free(&bay);
}

/* Outputs take the fast write only in their input's bay; a mux refuses an
 * output that would drop duplicates (chan_set_any cannot). */
static void test_outputs(void)
{
	struct bay bay;
	struct chan sel, in, out, loose, strict;
	bay_init(&bay);
	chan_init(&sel, CHAN_SINGLE, "sel");
	chan_init(&in, CHAN_SINGLE, "in");
	chan_init(&out, CHAN_SINGLE, "out");
	chan_init(&loose, CHAN_SINGLE, "loose"); /* in no bay */
	chan_init(&strict, CHAN_SINGLE, "strict");
	struct chan *all[] = { &sel, &in, &out };
	for (int i = 0; i < 3; i++)
		bay_add(&bay, all[i]);
	chan_on_emit(&out, log_emit, NULL);
	struct mux a, b, c;
	mux_init(&a, &sel, &out, NULL, 1);
	mux_set_input(&a, 0, &in);
	mux_init(&b, &sel, &loose, NULL, 1);
	mux_set_input(&b, 0, &in);
	chan_set_flags(&strict, CHAN_IGNORE_DUP);
	CHECK_INT(mux_init(&c, &sel, &strict, NULL, 1), -1, "an output that ignores duplicates is refused");
	chan_set(&sel, value_int64(0));
	step(&bay);
	chan_set(&in, value_int64(7));
	step(&bay);
	CHECK_STR(log_buf, "out=7 ", "the output in the bay is queued and written");
	CHECK_INT(chan_read(&loose).i, 7, "an output in no bay still takes the value");
	CHECK_INT(loose.dirty, 1, "and stays dirty (nothing flushes it)");
	mux_free(&a);
	mux_free(&b);
	for (int i = 0; i < 3; i++)
		chan_free(all[i]);
	chan_free(&loose);
	chan_free(&strict);
	bay_free(&bay);
}

/* More channels dirty in one step than the queue first held: the queue
 * grows with the bay, not on a write. */
static void test_many_dirty(void)
{
	enum { N = 700 };
	struct bay bay;
	struct chan *v = calloc(N, sizeof(*v));
	bay_init(&bay);
	int emitted = 0;
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "c%d", i);
		chan_init(&v[i], CHAN_SINGLE, name);
		bay_add(&bay, &v[i]);
		chan_on_emit(&v[i], count_emit, &emitted);
	}
	for (int i = 0; i < N; i++)
		chan_set(&v[i], value_int64(i + 1));
	CHECK_INT(bay_propagate(&bay), 0, "a step with every channel dirty");
	CHECK_INT(emitted, N, "every channel emitted once");
	for (int i = 0; i < N; i++)
		chan_free(&v[i]);
	free(v);
	bay_free(&bay);
}

int main(void)
{
	test_mux();
	test_outputs();
	test_many_dirty();
	test_shared_input();
	test_tracks();
	return t_done();
}
