/* Helpers shared by the automatic instrumentation (instr.h). */
#include "rt/instr.h"

#include <dlfcn.h>

/* With every signal blocked: a handler's call of the same kind in the
 * middle would declare a second time, in a half-made metadata tree. (The
 * block mark, whose first wait may be in a handler, does not come here:
 * block.c.) */
void rt_instr_declare(struct rt_thread *t, unsigned kind, rt_instr_declare_fn declare)
{
	sigset_t caller;
	rt_signals_off(&caller);
	if (!(t->instr & kind)) {
		declare(t);
		t->instr |= kind;
		rt_meta_write(t);
	}
	rt_signals_on(&caller);
}

void rt_instr_meta_set(struct rt_thread *t, const char *key, const char *value)
{
	if (json_dotset(t->meta, key, json_new_string(value)) != 0)
		rt_die("ovni record", "out of memory");
}

void *rt_instr_next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (!f)
		rt_die("ovni record", "cannot find the real %s", name);
	return f;
}
