/* Helpers shared by the automatic instrumentation (instr.h). */
#include "rt/instr.h"

#include <dlfcn.h>

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
