/* A Paraver trace: NAME.prv, NAME.pcf and NAME.row written together, plus
 * the views (.cfg) of the types it holds. */
#ifndef OVNI_PARAVER_PVT_H
#define OVNI_PARAVER_PVT_H

#include <stddef.h>
#include <stdint.h>

#include "paraver/cfg.h"
#include "paraver/pcf.h"
#include "paraver/prv.h"

/* What a type's values are, beyond the .pcf (pvt_set_type_flags). */
#define PVT_STACK 1u /* the row shows the top of a stack: values nest */
#define PVT_TASK_TYPE 2u /* task types: labelled in the .pcf only at the end */

struct pvt_type_flags {
	int type;
	unsigned flags;
};

struct pvt {
	char *name; /* "thread", "cpu", ... */
	char *base; /* "<dir>/<name>" */
	struct prv prv;
	struct pcf pcf;
	char **rows; /* row labels */
	size_t nrows;
	struct cfg_view **views; /* each its own allocation: callers keep pointers */
	size_t nviews, vcap;
	struct pvt_type_flags *tflags;
	size_t ntflags;
	int open;
	int tapped; /* opened with pvt_open_tap: no files */
};

/* Creates dir/name.prv with nrows rows. -1 after a message. */
int pvt_open(struct pvt *t, const char *dir, const char *name, size_t nrows);
/* A trace whose .prv lines go to tap (prv_open_tap) and that writes no
 * file at all; the .pcf, rows and views stay in memory for the reader. */
int pvt_open_tap(struct pvt *t, const char *name, size_t nrows, const struct prv_tap *tap);
int pvt_set_row(struct pvt *t, size_t row, const char *label);
/* Records PVT_* flags of a type (for readers of a tapped trace). -1 after
 * failf. */
int pvt_set_type_flags(struct pvt *t, int type, unsigned flags);
unsigned pvt_type_flags(const struct pvt *t, int type);
/* Adds a view: path relative to the cfg directory (".cfg" appended),
 * window title and type label. Returns the view (to set colours) or NULL
 * after failf; it stays valid until pvt_free. */
struct cfg_view *pvt_add_view(struct pvt *t, const char *path, const char *title,
			      const char *label, int type, int colors);
/* Adds a colour to a custom palette view. -1 after failf. */
int cfg_view_add_color(struct cfg_view *v, int64_t value, const unsigned char rgb[3]);
/* Finishes the .prv with duration, writes .pcf and .row. On a write error
 * the three files are removed. -1 after a message. */
int pvt_close(struct pvt *t, int64_t duration);
/* Removes whatever was written. */
void pvt_discard(struct pvt *t);
/* Writes every view under cfgdir. */
int pvt_write_views(const struct pvt *t, const char *cfgdir);
void pvt_free(struct pvt *t);

#endif
