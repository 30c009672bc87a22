/* Events as text, for `ovni dump`: the reference's columns ("%10ld  MCV
 * path  ") followed by the payload in hex or by the event's description, or
 * one JSON object per event. */
#ifndef OVNI_DUMP_H
#define OVNI_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "base/out.h"
#include "trace/meta.h"
#include "trace/player.h"
#include "trace/stream.h"

/* What follows the clock on every line of one stream: "  MCV  <relpath>  ",
 * its MCV written over per event. */
struct dump_tail {
	char *text;
	size_t len;
};

int dump_tail_init(struct dump_tail *t, const char *relpath);
void dump_tail_free(struct dump_tail *t);

/* One line with the payload as ":%02x" per byte (jumbo: the 4 length bytes
 * too); no payload leaves the line ending in the two spaces. */
void dump_hex(struct out *o, const struct ev *ev, const struct dump_tail *t);
/* dump_hex of every event p plays, tails[i] for its stream i, until the
 * end or a failed write (o->err). -1 if the player fails (reported). */
int dump_hex_play(struct out *o, struct player *p, const struct dump_tail *tails);
/* One line ending in the description of the event, or UNKNOWN when no model
 * declares its MCV or the payload does not fit its signature. Needs
 * events_init(). */
void dump_text(struct out *o, const struct ev *ev, const struct dump_tail *t);
/* dump_text of every event p plays, as dump_hex_play. */
int dump_text_play(struct out *o, struct player *p, const struct dump_tail *tails);
/* One JSON object on one line: clock, mcv, stream, offset, then "args" with
 * the named payload fields when a model declares the MCV, else "payload"
 * with the bytes in hex. */
void dump_json(struct out *o, const struct ev *ev, const char *relpath);

/* The command line of a recorded process (stream_meta.argv), one line-safe
 * string: arguments separated by spaces, those with spaces or quotes in
 * single quotes. */
void dump_cmdline(struct out *o, const struct json *argv);
/* What `ovni record` noted about a stream, as "# " lines: the executable
 * and command line of its process, the context switches the kernel
 * dropped. Nothing for other streams. */
void dump_notes(struct out *o, const struct stream_meta *m, const char *relpath);

/* Matches MCVs against a glob (fnmatch), remembering every answer. */
struct mcv_filter {
	char *glob;
	uint8_t *seen; /* per 7-bit MCV: 0 unknown, 1 match, 2 no match */
};

int mcv_filter_init(struct mcv_filter *f, const char *glob);
int mcv_filter_match(struct mcv_filter *f, const uint8_t mcv[3]);
void mcv_filter_free(struct mcv_filter *f);

#endif
