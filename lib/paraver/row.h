/* The .row writer (spec emu.md 3.2): one node, then a label per row. */
#ifndef OVNI_PARAVER_ROW_H
#define OVNI_PARAVER_ROW_H

#include <stddef.h>

/* labels[i] names row i; every row needs one. -1 after a message. */
int row_write(const char *path, const char *const *labels, size_t n);

#endif
