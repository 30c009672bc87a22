/* The .pcf writer (spec emu.md 3.3): a fixed header and palette, then every
 * event type with its values, in the order they were added. Labels are
 * names: they are written as given. */
#ifndef OVNI_PARAVER_PCF_H
#define OVNI_PARAVER_PCF_H

#include <stddef.h>
#include <stdint.h>

struct pcf_value {
	int64_t value;
	char *label;
};

struct pcf_type {
	int id;
	char *label;
	struct pcf_value *values;
	size_t n, cap;
};

struct pcf {
	struct pcf_type **types;
	size_t n, cap;
};

void pcf_init(struct pcf *p);
void pcf_free(struct pcf *p);
/* Adds type id; NULL after failf if it exists or memory runs out. */
struct pcf_type *pcf_add_type(struct pcf *p, int id, const char *label);
struct pcf_type *pcf_find_type(const struct pcf *p, int id);
/* Adds a value; an existing value with the same label is fine, with
 * another label an error (after failf). */
int pcf_add_value(struct pcf_type *t, int64_t value, const char *label);
const char *pcf_value_label(const struct pcf_type *t, int64_t value);
/* Writes the file; -1 after a message. */
int pcf_write(const struct pcf *p, const char *path);

#endif
