/* Task type ids from labels: the reference derives a type's Paraver value
 * from its label with Bob Jenkins' lookup2 hash (as uthash applies it), so
 * the same label gets the same value in every trace. */
#ifndef OVNI_LABELHASH_H
#define OVNI_LABELHASH_H

#include <stddef.h>
#include <stdint.h>

/* lookup2 over len bytes, initial value 0xfeedbeef. */
uint32_t labelhash_jenkins(const void *key, size_t len);
/* The Paraver value of a task type label: (hash + 666) & 0x7fffffff,
 * plus 1000 when below 1000 (small values are reserved). */
uint32_t labelhash_type_value(const char *label);

#endif
