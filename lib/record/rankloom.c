#include "record/rankloom.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/file.h"
#include "base/msg.h"
#include "base/json.h"

#define MAXPROCS 4096

/* Calls fn(path of stream.json, arg) for each thread of a process. */
static int each_thread(const char *proc, int (*fn)(const char *, void *), void *arg)
{
	DIR *d = opendir(proc);
	if (!d) {
		msg_err("%s: %s", proc, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (strncmp(e->d_name, "thread.", 7) != 0)
			continue;
		char dir[PATH_MAX], path[PATH_MAX];
		if (file_join_to(dir, sizeof(dir), proc, e->d_name) >= sizeof(dir) ||
		    file_join_to(path, sizeof(path), dir, "stream.json") >= sizeof(path))
			continue;
		rc = fn(path, arg);
	}
	closedir(d);
	return rc;
}

/* Sets *(int *)arg when the stream names a rank; 1 stops the walk. */
static int has_rank(const char *path, void *arg)
{
	struct json *m = json_parse_file(path);
	int found = m && json_dotget(m, "ovni.rank") != NULL;
	json_free(m);
	if (found)
		*(int *)arg = 1;
	return found;
}

/* Rewrites ovni.loom of the stream (arg: the new name), atomically. */
static int set_loom(const char *path, void *arg)
{
	struct json *m = json_parse_file(path);
	if (!m) {
		msg_err("%s", fail_take());
		return -1;
	}
	size_t len = 0;
	char *text = json_dotset(m, "ovni.loom", json_new_string(arg)) == 0 ? json_write_pretty(m, &len) : NULL;
	json_free(m);
	int rc = text ? file_write_atomic(path, text, len, file_mode_default()) : -1;
	if (rc != 0)
		msg_err("%s: cannot rewrite: %s", path, text ? strerror(errno) : "out of memory");
	free(text);
	return rc;
}

int rankloom_split(const char *tracedir, const char *loom, char *dst, size_t n, unsigned *moved)
{
	*moved = 0;
	char dir[PATH_MAX], to[PATH_MAX];
	if ((size_t)snprintf(dir, sizeof(dir), "%s/loom.%s", tracedir, loom) >= sizeof(dir) ||
	    (size_t)snprintf(dst, n, "%s.norank", loom) >= n ||
	    (size_t)snprintf(to, sizeof(to), "%s/loom.%s", tracedir, dst) >= sizeof(to))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* nothing was recorded */
	static char unranked[MAXPROCS][NAME_MAX + 1];
	unsigned nun = 0, nranked = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strncmp(e->d_name, "proc.", 5) != 0)
			continue;
		char proc[PATH_MAX];
		if (file_join_to(proc, sizeof(proc), dir, e->d_name) >= sizeof(proc))
			continue;
		int ranked = 0;
		each_thread(proc, has_rank, &ranked);
		if (ranked)
			nranked++;
		else if (nun < MAXPROCS)
			snprintf(unranked[nun++], sizeof(unranked[0]), "%s", e->d_name);
	}
	closedir(d);
	if (nranked == 0 || nun == 0)
		return 0;
	if (file_mkdirs(to, 0) != 0) {
		msg_err("%s: %s", to, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < nun; i++) {
		char from[PATH_MAX], dest[PATH_MAX];
		if (file_join_to(from, sizeof(from), dir, unranked[i]) >= sizeof(from) ||
		    file_join_to(dest, sizeof(dest), to, unranked[i]) >= sizeof(dest))
			continue;
		if (each_thread(from, set_loom, dst) != 0)
			return -1;
		if (rename(from, dest) != 0) {
			msg_err("cannot move %s to %s: %s", from, dest, strerror(errno));
			return -1;
		}
		(*moved)++;
	}
	return 0;
}
