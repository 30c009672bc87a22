#include "trace/streamset.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/file.h"
#include "base/msg.h"

/* Streams bigger than the read buffer keep a descriptor open: allow one per
 * stream if the hard limit lets us. */
static void raise_fd_limit(size_t n)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)n + 64;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int streamset_open(struct streamset *s, struct trace *t, const char *glob, unsigned flags)
{
	memset(s, 0, sizeof(*s));
	raise_fd_limit(t->n);
	size_t n = t->n ? t->n : 1;
	s->readers = calloc(n, sizeof(*s->readers));
	s->stream = calloc(n, sizeof(*s->stream));
	s->names = calloc(n, sizeof(*s->names));
	if (!s->readers || !s->stream || !s->names) {
		msg_err("out of memory for %zu streams", t->n);
		return -1;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (glob && fnmatch(glob, t->streams[i].relpath, 0) != 0)
			continue;
		size_t k = s->n++;
		s->stream[k] = i;
		if (!(s->names[k] = file_join(t->streams[i].dir, "stream.obs"))) {
			msg_err("out of memory");
			return -1;
		}
		struct byte_src *src = trace_stream_src(t, i);
		if (!src || sr_open(&s->readers[k], src, s->names[k], flags) < 0)
			return -1;
	}
	if (s->n == 0) {
		msg_err("%s: no stream path matches '%s'", t->root, glob ? glob : "*");
		return -1;
	}
	return 0;
}

void streamset_close(struct streamset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		sr_close(&s->readers[i]);
		free(s->names[i]);
	}
	free(s->readers);
	free(s->stream);
	free(s->names);
	memset(s, 0, sizeof(*s));
}
