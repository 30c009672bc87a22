/* Paraver view files (.cfg, format 3.4, one window; see paraver-cfg.md):
 * one per event type we emit, so that Paraver opens a timeline of it. */
#ifndef OVNI_PARAVER_CFG_H
#define OVNI_PARAVER_CFG_H

#include <stddef.h>
#include <stdint.h>

enum cfg_colors {
	CFG_CODE, /* Paraver's default palette */
	CFG_NULL_GRADIENT, /* identifiers: one gradient, 0 left blank */
	CFG_CUSTOM, /* the colours listed in the view */
};

struct cfg_color {
	int64_t value;
	unsigned char rgb[3];
};

struct cfg_view {
	char *path; /* "thread/ovni/thread-state.cfg", relative to the cfg directory */
	char *title; /* window title */
	char *label; /* event type label, as in the .pcf */
	int type;
	int colors;
	int next_value; /* semantic Next Evt Val instead of Last Evt Val */
	struct cfg_color *custom;
	size_t ncustom;
};

/* Writes the view under dir (creating subdirectories). -1 after a message. */
int cfg_write(const char *dir, const struct cfg_view *v);
void cfg_view_free(struct cfg_view *v);
/* A colour for the n-th value of a custom palette (distinct for n < 20). */
void cfg_pick_color(size_t n, unsigned char rgb[3]);

#endif
