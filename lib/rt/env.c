/* The recorder's variables (lib/record/state.h), taken by the shim at start
 * and hidden from the program, which sees the environment it would have
 * had without `ovni record`; every new image gets them back (exec, spawn,
 * system, popen), so that it is recorded too. */
#include "rt/rt.h"
#include "record/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static char *ours[RT_ENV_NVARS]; /* values taken at start (NULL: none) */
static int hidden;

static int find(const char *name)
{
	for (size_t i = 0; i < RT_ENV_NVARS; i++)
		if (strcmp(rt_env_vars[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* "NAME=" at the start of entry: the length of NAME= , else 0. */
static size_t names(const char *entry, const char *prefix, const char *name)
{
	size_t p = strlen(prefix), n = strlen(name);
	if (strncmp(entry, prefix, p) != 0 || strncmp(entry + p, name, n) != 0 || entry[p + n] != '=')
		return 0;
	return p + n + 1;
}

/* environ is read and changed in place, not with getenv, setenv and
 * unsetenv: a program may define its own (bash does, over its shell
 * variables, not set up yet when the shim starts), and a new array would
 * leave main's envp behind. */
static char **slot(const char *prefix, const char *name)
{
	for (char **e = environ; e && *e; e++)
		if (names(*e, prefix, name))
			return e;
	return NULL;
}

static const char *value(const char *prefix, const char *name)
{
	char **e = slot(prefix, name);
	return e ? *e + names(*e, prefix, name) : NULL;
}

static void drop(const char *prefix, const char *name)
{
	char **e;
	while ((e = slot(prefix, name)) != NULL)
		do
			e[0] = e[1];
		while (*e++);
}

char *rt_env_take(const char *name)
{
	const char *v = value("", name);
	char *copy = v ? strdup(v) : NULL;
	drop("", name);
	return copy;
}

void rt_env_hide(void)
{
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name;
		const char *v = value("", name), *user = value(RT_ENV_USER_PREFIX, name);
		char *cur = v ? strdup(v) : NULL;
		/* the recorder's part of a prepended one: what a new image gets
		 * before the value the program gives it */
		size_t cl = cur ? strlen(cur) : 0, ul = user ? strlen(user) : 0;
		if (cur && user && rt_env_vars[i].prepend && cl > ul && cur[cl - ul - 1] == ':' &&
		    strcmp(cur + cl - ul, user) == 0)
			cur[cl - ul - 1] = '\0';
		ours[i] = cur;
		char **e = slot("", name);
		size_t n = strlen(name);
		char *mine = e && user ? malloc(n + strlen(user) + 2) : NULL;
		if (mine) { /* the user's value, where ours was */
			sprintf(mine, "%s=%s", name, user);
			*e = mine;
		} else {
			drop("", name);
		}
		drop(RT_ENV_USER_PREFIX, name);
	}
	hidden = 1;
}

const char *rt_env(const char *name)
{
	int i = hidden ? find(name) : -1;
	return i < 0 ? getenv(name) : ours[i];
}

char **rt_env_traced(char *const envp[], const char *extra)
{
	size_t n = 0, bytes = 0;
	while (envp && envp[n])
		n++;
	const char *app[RT_ENV_NVARS] = { 0 }; /* the values the program gives */
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < RT_ENV_NVARS; i++) {
			size_t l = names(envp[k], "", rt_env_vars[i].name);
			if (l)
				app[i] = envp[k] + l;
		}
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name;
		bytes += 2 * (strlen(RT_ENV_USER_PREFIX) + strlen(name) + 2);
		bytes += (app[i] ? 2 * strlen(app[i]) : 0) + (ours[i] ? strlen(ours[i]) : 0) + 1;
	}
	char **e = malloc((n + 2 * RT_ENV_NVARS + 2) * sizeof(*e) + bytes);
	if (!e)
		return NULL;
	char *s = (char *)(e + n + 2 * RT_ENV_NVARS + 2);
	size_t k = 0;
	for (size_t j = 0; j < n; j++) {
		int mine = names(envp[j], "", RT_ENV_RESUME) != 0;
		for (size_t i = 0; i < RT_ENV_NVARS && !mine; i++)
			mine = names(envp[j], "", rt_env_vars[i].name) || names(envp[j], RT_ENV_USER_PREFIX, rt_env_vars[i].name);
		if (!mine)
			e[k++] = envp[j];
	}
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name;
		if (app[i]) {
			e[k++] = s;
			s += sprintf(s, RT_ENV_USER_PREFIX "%s=%s", name, app[i]) + 1;
		}
		/* the loader reads the prepended ones: the program's part stays */
		const char *a = rt_env_vars[i].prepend ? app[i] : NULL;
		if (ours[i] || a) {
			e[k++] = s;
			s += sprintf(s, "%s=%s%s%s", name, ours[i] ? ours[i] : "", ours[i] && a ? ":" : "", a ? a : "") + 1;
		}
	}
	if (extra)
		e[k++] = (char *)extra;
	e[k] = NULL;
	return e;
}
