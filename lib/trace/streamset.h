/* The stream readers of a trace, or of the streams whose path matches a
 * glob: what dump and top (and any other reader) play. */
#ifndef OVNI_STREAMSET_H
#define OVNI_STREAMSET_H

#include <stddef.h>

#include "trace/stream.h"
#include "trace/trace.h"

struct streamset {
	struct stream_reader *readers;
	size_t *stream; /* index in trace.streams of each reader */
	char **names; /* stream.obs as the user can open it, for messages */
	size_t n;
};

/* Opens, in trace order, the streams of t whose relpath matches glob
 * (fnmatch; NULL takes all) with sr_open flags. Returns 0, or -1 after a
 * one-line message (including a glob that matches nothing). */
int streamset_open(struct streamset *s, struct trace *t, const char *glob, unsigned flags);
void streamset_close(struct streamset *s);

#endif
