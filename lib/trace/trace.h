/* A trace on disk: find its streams. A stream is any directory holding
 * stream.json and stream.obs; a trace is a directory of streams at any depth
 * (or a single stream directory). Streams are ordered by relative path
 * (strcmp), as the reference orders them. Everything is opened read-only. */
#ifndef OVNI_TRACE_H
#define OVNI_TRACE_H

#include <stddef.h>

#include "base/json.h"
#include "trace/meta.h"
#include "trace/stream.h"

struct trace_stream {
	char *relpath; /* stream directory relative to the trace root; "" for a single-stream trace */
	char *dir; /* the stream directory as a path that can be opened */
	char *obs_name; /* "<relpath>/stream.obs", for messages */
	struct json *json; /* parsed stream.json */
	struct stream_meta meta; /* interpreted metadata */
	void *obs_member; /* archive member of stream.obs (pack traces) */
};

struct trace {
	char *root; /* as given, trailing slashes removed */
	size_t n;
	struct trace_stream *streams;
	void *archive; /* set when the trace is read from a pack file */
	size_t zero_tails; /* unfinished streams whose zero tail was left out */
};

/* Flags for trace_open. */
#define TRACE_REQUIRE_FINISHED 1u /* every stream must have ovni.finished = 1 (emu) */
#define TRACE_SORT_PENDING_OK 2u /* a stream may hold a pending sort journal (ovni sort finishes it) */

/* Finds the streams under path (a directory or a pack archive), parses and
 * checks every stream.json. A stream with the journal of an interrupted
 * `ovni sort` beside it (STREAM_JOURNAL_SUFFIX) is an error, as its
 * stream.obs may be half written, unless TRACE_SORT_PENDING_OK.
 * Returns 0, or -1 after a one-line message naming the file (and JSON
 * line:column). A path holding no stream is an error. */
int trace_open(struct trace *t, const char *path, unsigned flags);
/* A byte source over the stream's events (file or archive member). An
 * unfinished stream file that ends in zeros (the last window of a killed
 * `ovni record`) or an event cut short stops at its last event, with a
 * warning; one whose last events wait in a staging file (trace/stage.h)
 * goes on through them. */
struct byte_src *trace_stream_src(struct trace *t, size_t i);
/* When stream i is such an unfinished stream file, its events ending at
 * *end: 1 if zeros follow, 2 if an event cut short; else 0. */
int trace_stream_zero_tail(const struct trace *t, size_t i, uint64_t *end);
/* 1 when stream i is unfinished and its last events wait in a staging
 * file (a recording killed with its program), *size its file's; else 0. */
int trace_stream_staged(const struct trace *t, size_t i, uint64_t *size);
/* A file at the trace root (e.g. clock-offsets.txt), read whole and
 * NUL-terminated; NULL with *absent = 1 if there is none, NULL with
 * *absent = 0 after an error message. */
char *trace_read_extra(struct trace *t, const char *name, size_t *len, int *absent);
void trace_close(struct trace *t);

/* 1 when out names an existing file that reading the trace at path reads:
 * path itself (an archive), or a stream.obs or stream.json under it. A
 * command refuses such an output (-o): it would overwrite its own input,
 * the user's trace. Else 0. */
int trace_reads_file(const char *path, const char *out);

#endif
