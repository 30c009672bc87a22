/* A signal handler that leaves by a long jump (siglongjmp out of a SIGINT
 * or SIGALRM handler, as REPLs and test harnesses do) never returns to what
 * it interrupted. When that was an emit of its thread, or a drain of its
 * switches, the guard and the slot they hold would stay taken, and every
 * later event of the thread would wait in the side buffer until it filled:
 * the jump takes them over and gives them back first (the handler's own
 * events are written; the event being written when it came is not, as it
 * never was emitted). Nothing else is done: no event, no cost but a test. */
#include "rt/kernel.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <setjmp.h>

typedef void (*jump_fn)(struct __jmp_buf_tag *, int);

static jump_fn real_longjmp, real__longjmp, real_siglongjmp, real___longjmp_chk;

/* Looked up when the shim loads: a handler must not call the loader. */
__attribute__((constructor)) static void jump_init(void)
{
	real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
	real___longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

static void leave(void)
{
	struct rt_thread *t = &rt_self;
	/* a jump out of none of ours (an error path of the program, as perl's
	 * die): no system call */
	if (!t->ready || (!t->busy && !rt_kernel_in_drain()))
		return;
	sigset_t caller; /* a second handler jumping out of this one finds it done */
	rt_signals_off(&caller);
	int held = t->busy;
	if (held)
		rt_stream_hold(t);
	/* also between a drain's start and its guard: it writes only with
	 * the guard held, and lets go of the slot and the drain either way */
	rt_kernel_jumped(t);
	if (held)
		rt_guard_give(t, 0);
	rt_signals_on(&caller);
}

/* The real function, or (looked up by another name, or not at all) the one
 * glibc has under every name. */
static __attribute__((noreturn)) void jump(jump_fn f, struct __jmp_buf_tag *env, int val)
{
	leave();
	if (!f)
		f = real_siglongjmp ? real_siglongjmp : real_longjmp;
	f(env, val);
	__builtin_unreachable();
}

RT_API __attribute__((noreturn)) void longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(real_longjmp, env, val);
}

RT_API __attribute__((noreturn)) void _longjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(real__longjmp, env, val);
}

RT_API __attribute__((noreturn)) void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
	jump(real_siglongjmp, env, val);
}

RT_API __attribute__((noreturn)) void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
	jump(real___longjmp_chk, env, val);
}
