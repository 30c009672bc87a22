#include "record/leftover.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends the children of every thread of pid to out[*n...]: a process
 * forked by a thread other than the first is that thread's child. */
static void add_children(pid_t pid, pid_t *out, size_t max, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char cpath[320], buf[4096];
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		FILE *f = fopen(cpath, "re");
		if (!f)
			continue;
		size_t got = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[got] = '\0';
		for (char *p = buf;;) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p || v <= 0)
				break;
			if (*n < max)
				out[*n] = (pid_t)v;
			(*n)++;
			p = end;
		}
	}
	closedir(d);
}

size_t leftover_list(pid_t *out, size_t max)
{
	size_t n = 0;
	add_children(getpid(), out, max, &n);
	/* breadth first: each one listed is walked in turn, its children appended */
	for (size_t i = 0; i < n && i < max; i++)
		add_children(out[i], out, max, &n);
	return n;
}

/* The command name of pid (comm), "" when it is gone. */
static void comm_of(pid_t pid, char *name, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	name[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)len, f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
}

void leftover_names(const pid_t *pids, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char name[64], one[96];
		comm_of(pids[i], name, sizeof(name));
		if (!name[0])
			continue;
		int w = snprintf(one, sizeof(one), "%s%d (%s)", at ? ", " : "", (int)pids[i], name);
		if (at + (size_t)w + 5 > len) {
			snprintf(buf + at, len - at, "%s...", at ? ", " : "");
			return;
		}
		memcpy(buf + at, one, (size_t)w + 1);
		at += (size_t)w;
	}
}

size_t leftover_signal(int sig)
{
	enum { MAX = 4096 };
	pid_t *pids = malloc(MAX * sizeof(*pids));
	if (!pids)
		return 0;
	size_t n = leftover_list(pids, MAX), sent = 0;
	for (size_t i = 0; i < n && i < MAX; i++)
		sent += kill(pids[i], sig) == 0;
	free(pids);
	return sent;
}
