/* A hash map from 32-bit keys to non-NULL pointers: open addressing with
 * linear probing and backward-shift deletion, so removing keeps lookups
 * short without tombstones. Tasks, task types and id sets use it. */
#ifndef OVNI_U32MAP_H
#define OVNI_U32MAP_H

#include <stddef.h>
#include <stdint.h>

struct u32map_slot {
	uint32_t key;
	void *val; /* NULL: free slot */
};

struct u32map {
	struct u32map_slot *slots;
	size_t mask; /* capacity - 1 (capacity is a power of two), 0 when empty */
	size_t n;
};

void u32map_init(struct u32map *m);
void u32map_free(struct u32map *m);
/* The value of key, or NULL. */
void *u32map_get(const struct u32map *m, uint32_t key);
/* Sets key to val (non-NULL), replacing any value. -1 when out of memory. */
int u32map_put(struct u32map *m, uint32_t key, void *val);
/* Adds key with val (non-NULL) unless present: 0 added, 1 already there
 * (left as it was), -1 when out of memory. */
int u32map_add(struct u32map *m, uint32_t key, void *val);
/* Removes key; returns its value, or NULL if absent. */
void *u32map_del(struct u32map *m, uint32_t key);
static inline size_t u32map_count(const struct u32map *m) { return m->n; }

#endif
