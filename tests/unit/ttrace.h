/* Helpers for the trace, system and clock offset tests: build small traces
 * in a temporary directory. */
#ifndef OVNI_TEST_TTRACE_H
#define OVNI_TEST_TTRACE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/stream.h"

static char tt_root[256];

/* Calls fn(case directory, arg) for every golden case (tests/golden/MODEL/CASE). */
static inline void tt_each_golden(void (*fn)(const char *dir, void *arg), void *arg)
{
	const char *models[] = { "mpi", "nanos6", "nosv", "openmp", "ovni", "tampi" };
	for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
		char mdir[256];
		snprintf(mdir, sizeof(mdir), "tests/golden/%s", models[m]);
		DIR *d = opendir(mdir);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char cdir[512];
			snprintf(cdir, sizeof(cdir), "%s/%s", mdir, e->d_name);
			fn(cdir, arg);
		}
		if (d)
			closedir(d);
	}
}

/* mkdir -p of root/rel. */
static inline void tt_mkdirs(const char *path)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

__attribute__((format(printf, 2, 3)))
static inline void tt_write(const char *text, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	FILE *f = fopen(path, "w");
	if (!f) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	fputs(text, f);
	fclose(f);
}

/* A stream directory root/rel with stream.json = json and a header-only stream.obs. */
static inline void tt_stream(const char *rel, const char *json)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/%s", tt_root, rel);
	tt_mkdirs(dir);
	tt_write(json, "%s/stream.json", dir);
	uint8_t h[STREAM_HEADER_SIZE];
	stream_header(h);
	char obs[4200];
	snprintf(obs, sizeof(obs), "%s/stream.obs", dir);
	int fd = open(obs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, h, sizeof(h)) != (ssize_t)sizeof(h))
		abort();
	close(fd);
}

/* The stream.json of a finished thread; extra is spliced into "ovni" (may be ""). */
static inline const char *tt_thread_json(const char *loom, long pid, long tid, const char *extra)
{
	static char text[4096];
	snprintf(text, sizeof(text),
		 "{\"version\": 3, \"ovni\": {\"lib\": {\"version\": \"1.14.0\", \"commit\": \"cf025e2\"},"
		 " \"part\": \"thread\", \"tid\": %ld, \"pid\": %ld, \"loom\": \"%s\","
		 " \"require\": {\"ovni\": \"1.1.0\"}, \"finished\": 1%s%s}}",
		 tid, pid, loom, *extra ? ", " : "", extra);
	return text;
}

static inline void tt_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		chmod(path, 0755);
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char sub[4096];
			if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) < (int)sizeof(sub))
				tt_rm_rf(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* A fresh empty tt_root. */
static inline void tt_fresh(void)
{
	if (tt_root[0])
		tt_rm_rf(tt_root);
	snprintf(tt_root, sizeof(tt_root), "%s/ovni-unit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tt_root))
		abort();
}

static inline void tt_cleanup(void)
{
	if (tt_root[0])
		tt_rm_rf(tt_root);
	tt_root[0] = '\0';
}

#endif
