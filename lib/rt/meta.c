/* stream.json of one thread: built with lib/json.c, written pretty as
 * libovni writes it. The final text (with rank, CPUs and "finished") is kept
 * rendered after every change, so a crash handler can write it with
 * system calls only. */
#include "rt/rt.h"
#include "rt/instr.h"
#include "base/file.h"
#include "trace/blockmark.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef OVNI_VERSION
#define OVNI_VERSION "0"
#endif

static void set(struct rt_thread *t, const char *key, struct json *v)
{
	if (!v || json_dotset(t->meta, key, v) != 0)
		rt_die("rt_meta", "out of memory");
}

void rt_meta_init(struct rt_thread *t)
{
	json_free(t->meta);
	t->meta = json_new(JSON_OBJECT);
	if (!t->meta)
		rt_die("rt_meta_init", "out of memory");
	set(t, "version", json_new_number(OVNI_METADATA_VERSION));
	set(t, "ovni.lib.version", json_new_string(OVNI_LIB_VERSION));
	set(t, "ovni.lib.commit", json_new_string("ovni-record-" OVNI_VERSION));
	set(t, "ovni.part", json_new_string("thread"));
	set(t, "ovni.tid", json_new_number(t->tid));
	set(t, "ovni.pid", json_new_number(rt_proc.pid));
	set(t, "ovni.loom", json_new_string(rt_proc.loom));
	set(t, "ovni.app_id", json_new_number(rt_proc.app));
}

/* Whether t's renders declare the block mark. */
static int block_declared(const struct rt_thread *t)
{
	return (t->instr & RT_INSTR_BLOCK) && !(t->instr & RT_INSTR_BLOCK_OFF);
}

/* The metadata with rank and CPUs, "finished" when final and the block
 * mark with block. */
static char *render(struct rt_thread *t, size_t *len, int final, int block)
{
	struct json *m = json_copy(t->meta);
	if (!m || (block && blockmark_declare(m) != 0))
		rt_die("rt_meta", "out of memory");
	struct json *saved = t->meta;
	t->meta = m;
	if (t->has_rank) {
		set(t, "ovni.rank", json_new_number(t->rank));
		set(t, "ovni.nranks", json_new_number(t->nranks));
	}
	if (t->ncpus) {
		struct json *a = json_new(JSON_ARRAY);
		for (size_t i = 0; a && i < t->ncpus; i++) {
			struct json *c = json_new(JSON_OBJECT);
			if (!c || json_set(c, "index", json_new_number(t->cpus[i].index)) ||
			    json_set(c, "phyid", json_new_number(t->cpus[i].phyid)) || json_append(a, c))
				rt_die("rt_meta", "out of memory");
		}
		set(t, "ovni.loom_cpus", a);
	}
	if (final)
		set(t, "ovni.finished", json_new_number(1));
	t->meta = saved;
	char *s = json_write_pretty(m, len);
	json_free(m);
	if (!s)
		rt_die("rt_meta", "out of memory");
	return s;
}

/* With every signal blocked: a handler's first wait would switch to a
 * final_blk half replaced. */
void rt_meta_changed(struct rt_thread *t)
{
	sigset_t caller;
	rt_signals_off(&caller);
	size_t len;
	char *s = render(t, &len, 1, block_declared(t));
	char *old = t->final_json;
	/* A crash handler reads the pointer once: swap, then free. */
	__atomic_store_n(&t->final_len, len, __ATOMIC_RELAXED);
	__atomic_store_n(&t->final_json, s, __ATOMIC_RELEASE);
	free(old);
	free(t->final_old);
	t->final_old = NULL;
	free(t->final_blk);
	t->final_blk = rt_block_possible(t) ? render(t, &t->final_blk_len, 1, 1) : NULL;
	rt_signals_on(&caller);
}

void rt_meta_block_declared(struct rt_thread *t)
{
	if (!t->final_blk)
		return; /* not rendered yet: the first rt_meta_changed will */
	t->final_old = t->final_json;
	__atomic_store_n(&t->final_len, t->final_blk_len, __ATOMIC_RELAXED);
	__atomic_store_n(&t->final_json, t->final_blk, __ATOMIC_RELEASE);
	t->final_blk = NULL;
}

/* A text at least as long as the file's, in one page, goes over it in one
 * write: a process killed in a write to the page cache leaves it whole,
 * and no inode is made and deleted (on ext4 without a journal each
 * deleted one slows every file made in the next minute). 0 if written. */
static int write_over(const char *dst, const char *s, size_t len)
{
	if (len > 4096)
		return -1;
	int fd = open(dst, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int r = -1;
	if (rt_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= len)
		r = pwrite(fd, s, len, 0) == (ssize_t)len ? 0 : -1;
	close(fd);
	return r;
}

/* Written beside and renamed over (or over the file when that is as safe):
 * a crash never leaves half a file. */
static void write_text(struct rt_thread *t, const char *s, size_t len)
{
	const char *dst = t->where->json;
	if (t->lost) /* its stream is not recorded any more (stream.c) */
		return;
	if (write_over(dst, s, len) == 0 || file_write_atomic_at(AT_FDCWD, dst, s, len, 0644, 0) == 0)
		rt_record_meta_spill(t, NULL, 0, 0);
	else if (rt_record_meta_spill(t, s, len, 0) != 0) /* else the recorder writes it */
		rt_warn("ERROR: cannot write %s: %s\n", dst, strerror(errno));
}

/* With rank and CPUs already: a later write (a mark declared, attributes
 * flushed) must not take from a killed thread what a salvage needs. */
void rt_meta_write(struct rt_thread *t)
{
	rt_meta_write_progress(t);
}

void rt_meta_write_final(struct rt_thread *t)
{
	const char *s = __atomic_load_n(&t->final_json, __ATOMIC_ACQUIRE);
	if (s)
		write_text(t, s, __atomic_load_n(&t->final_len, __ATOMIC_RELAXED));
}

void rt_meta_hand_over(struct rt_thread *t)
{
	const char *s = __atomic_load_n(&t->final_json, __ATOMIC_ACQUIRE);
	if (s)
		rt_record_meta_spill(t, s, __atomic_load_n(&t->final_len, __ATOMIC_RELAXED), 1);
}

void rt_meta_write_progress(struct rt_thread *t)
{
	size_t len;
	char *s = render(t, &len, 0, block_declared(t));
	write_text(t, s, len);
	free(s);
}
