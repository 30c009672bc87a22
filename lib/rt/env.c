/* The recorder's variables (lib/record/state.h), taken by the shim at start
 * and hidden from the program, which sees the environment it would have
 * had without `ovni record`; every new image gets them back (exec, spawn,
 * system, popen), so that it is recorded too.
 *
 * They come as a block after the program's own variables, which stay as
 * they were, first entry RT_ENV_FIRST: the dynamic loader reads the last
 * LD_PRELOAD and LD_LIBRARY_PATH, ours. Hiding takes them out of environ,
 * and out of the kernel's copy too (/proc/self/environ), where it lets us. */
#include "rt/rt.h"
#include "record/state.h"

#include <fcntl.h>
#include <linux/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

static char *ours[RT_ENV_NVARS]; /* values taken at start (NULL: none) */
static char *resume; /* RT_ENV_RESUME, taken at start */
static int hidden;

static int find(const char *name)
{
	for (size_t i = 0; i < RT_ENV_NVARS; i++)
		if (strcmp(rt_env_vars[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* "NAME=" at the start of entry: the length of NAME= , else 0. */
static size_t names(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=' ? n + 1 : 0;
}

/* environ is read and changed in place, not with getenv, setenv and
 * unsetenv: a program may define its own (bash does, over its shell
 * variables, not set up yet when the shim starts), and a new array would
 * leave main's envp behind. */

/* Where the recorder's block starts: its last RT_ENV_FIRST (an `ovni
 * record` run under another passes the outer one's on as the program's). */
static char **block(void)
{
	char **b = NULL;
	for (char **e = environ; !hidden && e && *e; e++)
		if (names(*e, RT_ENV_FIRST))
			b = e;
	return b;
}

/* The value of the last entry of name in [from, to) (to NULL: the end). */
static const char *value_in(char *const *from, char *const *to, const char *name)
{
	const char *v = NULL;
	for (char *const *e = from; e && *e && e != to; e++) {
		size_t l = names(*e, name);
		if (l)
			v = *e + l;
	}
	return v;
}

/* One of the recorder's variables, at or after the start of its block. */
static int is_ours(const char *entry)
{
	if (names(entry, RT_ENV_RESUME))
		return 1;
	for (size_t i = 0; i < RT_ENV_NVARS; i++)
		if (names(entry, rt_env_vars[i].name))
			return 1;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Field i (1-based) of /proc/self/stat as a number, 0 when unknown. */
static unsigned long long stat_field(const char *stat, int i)
{
	const char *p = strrchr(stat, ')');
	for (int f = 2; p && f < i; f++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The kernel's view of the process's memory layout, as PR_SET_MM_MAP takes
 * it (from /proc/self/stat). 0 when read. */
static int mm_map_now(struct prctl_mm_map *m)
{
	char stat[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	stat[n] = '\0';
	memset(m, 0, sizeof(*m));
	m->start_code = stat_field(stat, 26);
	m->end_code = stat_field(stat, 27);
	m->start_stack = stat_field(stat, 28);
	m->start_data = stat_field(stat, 45);
	m->end_data = stat_field(stat, 46);
	m->start_brk = stat_field(stat, 47);
	m->arg_start = stat_field(stat, 48);
	m->arg_end = stat_field(stat, 49);
	m->env_start = stat_field(stat, 50);
	m->env_end = stat_field(stat, 51);
	m->exe_fd = (uint32_t)-1;
	return m->env_start ? 0 : -1;
}

static int in_kernel_copy(const struct prctl_mm_map *m, const char *s)
{
	return (uintptr_t)s >= m->env_start && (uintptr_t)s < m->env_end;
}

/* The kernel's copy of the environment (/proc/self/environ) without the
 * block that starts at first. When nothing follows the block, its end
 * moves to where the block starts. When a launcher between (mpirun's
 * proxies) added variables after it (rest), the copy becomes a new one,
 * the program's part then those: the old bytes stay where they are, under
 * any pointer into them. Needs Linux 3.18 with CONFIG_CHECKPOINT_RESTORE
 * (no privilege); else it stays as it was. */
static void cut_kernel_copy(const char *first, char *const *rest)
{
	struct prctl_mm_map m;
	if (mm_map_now(&m) != 0 || !in_kernel_copy(&m, first))
		return; /* not in the kernel's copy (a program's own array) */
	size_t head = (uintptr_t)first - m.env_start, len = head;
	for (char *const *e = rest; *e; e++) {
		if (!in_kernel_copy(&m, *e))
			return;
		len += strlen(*e) + 1;
	}
	char *copy = NULL;
	if (*rest) {
		copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (copy == MAP_FAILED)
			return;
		memcpy(copy, (const char *)(uintptr_t)m.env_start, head);
		char *d = copy + head;
		for (char *const *e = rest; *e; e++)
			d = stpcpy(d, *e) + 1;
		m.env_start = (uintptr_t)copy;
	}
	m.env_end = m.env_start + len;
	m.brk = (uint64_t)syscall(SYS_brk, 0); /* single-threaded: no malloc moves it now */
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, &m, sizeof(m), 0) != 0 && copy)
		munmap(copy, len);
}

void rt_env_hide(void)
{
	char **b = block();
	if (!b) {
		hidden = 1;
		return;
	}
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name;
		char *cur = dup_or_null(value_in(b, NULL, name));
		const char *user = value_in(environ, b, name);
		/* the recorder's part of a prepended one: what a new image gets
		 * before the value the program gives it */
		size_t cl = cur ? strlen(cur) : 0, ul = user ? strlen(user) : 0;
		if (cur && user && rt_env_vars[i].prepend && cl > ul && cur[cl - ul - 1] == ':' &&
		    strcmp(cur + cl - ul, user) == 0)
			cur[cl - ul - 1] = '\0';
		ours[i] = cur;
	}
	resume = dup_or_null(value_in(b, NULL, RT_ENV_RESUME));
	/* a launcher between (mpirun's proxies) may have added its own after
	 * the block: those stay */
	char *first = *b, **w = b;
	for (char **e = b; *e; e++)
		if (!is_ours(*e))
			*w++ = *e;
	*w = NULL;
	cut_kernel_copy(first, b);
	hidden = 1;
}

char *rt_env_take_resume(void)
{
	char *r = hidden ? resume : dup_or_null(value_in(block(), NULL, RT_ENV_RESUME));
	if (hidden)
		resume = NULL;
	return r;
}

const char *rt_env(const char *name)
{
	int i = find(name);
	if (i < 0)
		return getenv(name);
	if (hidden)
		return ours[i];
	char **b = block();
	return b ? value_in(b, NULL, name) : getenv(name);
}

char **rt_env_traced(char *const envp[], const char *extra)
{
	size_t n = 0, bytes = 0;
	while (envp && envp[n])
		n++;
	const char *app[RT_ENV_NVARS] = { 0 }; /* the values the program gives */
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		app[i] = rt_env_vars[i].prepend ? value_in(envp, NULL, rt_env_vars[i].name) : NULL;
		bytes += strlen(rt_env_vars[i].name) + 3 + (ours[i] ? strlen(ours[i]) : 0) +
			 (app[i] ? strlen(app[i]) : 0);
	}
	char **e = malloc((n + RT_ENV_NVARS + 2) * sizeof(*e) + bytes);
	if (!e)
		return NULL;
	char *s = (char *)(e + n + RT_ENV_NVARS + 2);
	size_t k = 0;
	for (size_t j = 0; j < n; j++) /* the program's, as they are */
		e[k++] = envp[j];
	/* then the block, RT_ENV_FIRST first (rt_env_vars has it before the
	 * ones that may be missing) */
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name;
		/* the loader reads the prepended ones: the program's part stays */
		const char *a = app[i];
		if (ours[i]) {
			e[k++] = s;
			s += sprintf(s, "%s=%s%s%s", name, ours[i], a ? ":" : "", a ? a : "") + 1;
		}
	}
	if (extra)
		e[k++] = (char *)extra;
	e[k] = NULL;
	return e;
}
