#include "base/out.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/lock.h"
#include "base/msg.h"

int out_init(struct out *o, int fd, const char *name, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->name = name;
	o->cap = cap ? cap : (size_t)128 << 10; /* more costs page faults, not fewer writes */
	o->buf = malloc(o->cap);
	if (!o->buf) {
		msg_err("%s: out of memory for the output buffer", name);
		return -1;
	}
	return 0;
}

int out_create(struct out *o, const char *path, size_t cap)
{
	/* Not truncated: writing over an older output's pages is cheaper than
	 * freeing them all first (and waiting on their writeback); out_close
	 * cuts what is left of it. */
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		msg_err("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (out_init(o, fd, path, cap) != 0) {
		close(fd);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) { /* not a device two runs may share */
		o->cut = 1;
		lock_file(fd, LOCK_EX, path, "another ovni command is reading or writing it");
	}
	return 0;
}

/* Writes p[0, n) to fd: 0, or the errno of the failure. *written counts
 * what went out. Thread-safe: says nothing. */
static int write_fd(int fd, const char *p, size_t n, uint64_t *written)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += w;
		n -= (size_t)w;
		*written += (uint64_t)w;
	}
	return 0;
}

static void write_failed(struct out *o, int err)
{
	o->err = err;
	msg_err("%s: write failed: %s", o->name, strerror(err));
}

static void write_all(struct out *o, const char *p, size_t n)
{
	int err = o->err ? 0 : write_fd(o->fd, p, n, &o->written);
	if (err)
		write_failed(o, err);
}

void out_write_through(struct out *o, const void *p, size_t n)
{
	write_all(o, p, n);
}

/* ---- the writer thread ---- */

/* Two buffers: the caller fills one while the writer writes the other
 * (job); a handover waits only for the previous one to be written. */
struct out_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;
	const char *job; /* being written; NULL when the writer is idle */
	size_t job_len;
	char *spare; /* the other buffer, once written */
	size_t spare_cap;
	int err; /* of a failed write, for the caller to report */
	uint64_t written;
	int quit;
};

static void *writer_main(void *arg)
{
	struct out_writer *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->job && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->job)
			break;
		const char *p = w->job;
		size_t n = w->job_len;
		int failed = w->err;
		uint64_t written = 0;
		pthread_mutex_unlock(&w->lock);
		int err = failed ? 0 : write_fd(w->fd, p, n, &written);
		pthread_mutex_lock(&w->lock);
		if (err)
			w->err = err;
		w->written += written;
		w->job = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int out_start_writer(struct out *o)
{
	struct stat st;
	if (fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0; /* a pipe or a device (/dev/null): a thread would only add handovers */
	struct out_writer *w = calloc(1, sizeof(*w));
	char *spare = malloc(o->cap);
	if (!w || !spare) {
		free(w);
		free(spare);
		return -1;
	}
	w->fd = o->fd;
	w->spare = spare;
	w->spare_cap = o->cap;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	/* signals (^C) are for the caller's thread: the writer blocks them all */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->cond);
		free(spare);
		free(w);
		return -1;
	}
	o->writer = w;
	return 0;
}

/* Waits for the writer to be idle; then its counts and error are o's. */
static void writer_wait(struct out *o)
{
	struct out_writer *w = o->writer;
	pthread_mutex_lock(&w->lock);
	while (w->job)
		pthread_cond_wait(&w->cond, &w->lock);
	o->written += w->written;
	w->written = 0;
	int err = w->err;
	pthread_mutex_unlock(&w->lock);
	if (err && !o->err)
		write_failed(o, err);
}

/* The filled buffer goes to the writer; the caller goes on in the other. */
static void writer_hand_over(struct out *o)
{
	struct out_writer *w = o->writer;
	writer_wait(o);
	if (o->err) { /* nothing more is written: the caller sees the error */
		o->len = 0;
		return;
	}
	pthread_mutex_lock(&w->lock);
	char *next = w->spare;
	size_t next_cap = w->spare_cap;
	w->job = o->buf;
	w->job_len = o->len;
	w->spare = o->buf;
	w->spare_cap = o->cap;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	o->buf = next;
	o->cap = next_cap;
	o->len = 0;
}

static void writer_stop(struct out *o)
{
	struct out_writer *w = o->writer;
	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w->spare);
	free(w);
	o->writer = NULL;
}

int out_flush(struct out *o)
{
	if (o->writer) {
		if (o->len)
			writer_hand_over(o);
		writer_wait(o);
		return o->err ? -1 : 0;
	}
	if (o->len)
		write_all(o, o->buf, o->len);
	o->len = 0;
	return o->err ? -1 : 0;
}

char *out_make_room(struct out *o, size_t n)
{
	if (o->writer && n <= o->cap) {
		if (o->len)
			writer_hand_over(o);
		if (n <= o->cap) /* the other buffer may be smaller */
			return o->buf;
	}
	out_flush(o);
	if (n > o->cap) {
		char *nb = realloc(o->buf, n);
		if (!nb) {
			msg_err("%s: out of memory", o->name);
			abort();
		}
		o->buf = nb;
		o->cap = n;
	}
	return o->buf;
}

int out_close(struct out *o)
{
	int rc = out_flush(o);
	if (o->writer)
		writer_stop(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = 0;
	/* Cut even after a failed write: what is left is then this run's
	 * part, never this run's part and the older file's tail. */
	if (o->cut && ftruncate(o->fd, (off_t)o->written) != 0 && rc == 0) {
		msg_err("%s: cannot cut what is left of the older file: %s", o->name, strerror(errno));
		rc = -1;
	}
	if (o->fd > 2 && close(o->fd) != 0 && rc == 0) {
		msg_err("%s: close failed: %s", o->name, strerror(errno));
		rc = -1;
	}
	o->fd = -1;
	return rc;
}

void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *d = out_reserve(o, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t min, c;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, c = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void out_json_string(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	out_char(o, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			out_mem(o, e, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			out_printf(o, "\\u%04x", c);
			i++;
		} else {
			size_t len = utf8_len(p + i, n - i);
			if (len)
				out_mem(o, p + i, len);
			else
				out_str(o, "\\ufffd");
			i += len ? len : 1;
		}
	}
	out_char(o, '"');
}
