/* Record mode with --kernel (OVNI_RECORD_KERNEL=1): the context switches of
 * every traced thread, from perf_event (kswitch.c). The recorder opens when
 * the thread starts and is drained when the thread creates a thread,
 * changes its affinity, calls ovni_flush, execs and ends; the thread then
 * requires the kernel model. Where perf_event
 * is forbidden, one notice per run and recording goes on without. */
#include "rt/kernel.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/kswitch.h"

static __thread struct kswitch ks __attribute__((tls_model("initial-exec")));

static void put(void *ctx, const char mcv[3], uint64_t clock)
{
	rt_emit_raw(ctx, mcv, clock, NULL, 0);
}

static int wanted(void)
{
	const char *v = getenv("OVNI_RECORD_KERNEL");
	return v && strcmp(v, "1") == 0;
}

void rt_kernel_begin(struct rt_thread *t, struct rt_state *state)
{
	if (ks.map) /* a forked child's copy of its parent thread's recorder */
		kswitch_forget(&ks);
	if (!wanted())
		return;
	/* OVNI_RECORD_TEST_KERNEL_DENY: the tests' way to be refused, as root */
	int rc = getenv("OVNI_RECORD_TEST_KERNEL_DENY") ? -EACCES : kswitch_open(&ks, 0);
	if (rc != 0) {
		uint32_t first = 0;
		if (atomic_compare_exchange_strong(&state->kernel_refused, &first, 1)) {
			char why[512];
			rt_warn("ovni record: kernel context switches are not recorded: %s; recording goes on "
				"without them (--no-kernel hides this notice)\n",
				kswitch_strerror(&ks, rc, why, sizeof(why)));
		}
		return;
	}
	ks.now = ovni_clock_now; /* the TSC-based clock of the thread's events */
	atomic_fetch_add(&state->kernel_threads, 1);
	ovni_thread_require("kernel", "1.0.0");
	rt_meta_write_progress(t); /* on disk now: a killed thread is salvaged from it */
}

void rt_kernel_drain(struct rt_thread *t)
{
	kswitch_drain(&ks, put, t);
}

void rt_kernel_end(struct rt_thread *t, struct rt_state *state)
{
	if (!ks.map)
		return;
	int interrupted = ks.draining; /* a fatal signal came in during a drain */
	kswitch_drain(&ks, put, t);
	atomic_fetch_add(&state->kernel_lost, ks.lost);
	if (!interrupted) /* else the interrupted drain still reads the ring */
		kswitch_close(&ks);
}
