#include "base/u32map.h"

#include <stdlib.h>

/* Fibonacci hashing: consecutive ids spread over the whole table. */
static size_t home(const struct u32map *m, uint32_t key)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15u) >> 32) & m->mask;
}

void u32map_init(struct u32map *m)
{
	m->slots = NULL;
	m->mask = 0;
	m->n = 0;
}

void u32map_free(struct u32map *m)
{
	free(m->slots);
	u32map_init(m);
}

void *u32map_get(const struct u32map *m, uint32_t key)
{
	if (!m->slots)
		return NULL;
	for (size_t i = home(m, key);; i = (i + 1) & m->mask) {
		const struct u32map_slot *s = &m->slots[i];
		if (!s->val)
			return NULL;
		if (s->key == key)
			return s->val;
	}
}

/* Places a key known to be absent. */
static void place(struct u32map *m, uint32_t key, void *val)
{
	size_t i = home(m, key);
	while (m->slots[i].val)
		i = (i + 1) & m->mask;
	m->slots[i].key = key;
	m->slots[i].val = val;
}

static int grow(struct u32map *m)
{
	size_t old_cap = m->slots ? m->mask + 1 : 0;
	size_t cap = old_cap ? old_cap * 2 : 16;
	struct u32map_slot *old = m->slots;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -1;
	}
	m->mask = cap - 1;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].val)
			place(m, old[i].key, old[i].val);
	free(old);
	return 0;
}

/* Sets or adds key; with keep, an existing value stays (returns 1). */
static int insert(struct u32map *m, uint32_t key, void *val, int keep)
{
	if (m->slots) {
		for (size_t i = home(m, key);; i = (i + 1) & m->mask) {
			struct u32map_slot *s = &m->slots[i];
			if (!s->val)
				break;
			if (s->key == key) {
				if (keep)
					return 1;
				s->val = val;
				return 0;
			}
		}
	}
	/* Keep the load at most 1/2 so probes stay short. */
	if (!m->slots || (m->n + 1) * 2 > m->mask + 1)
		if (grow(m) != 0)
			return -1;
	place(m, key, val);
	m->n++;
	return 0;
}

int u32map_put(struct u32map *m, uint32_t key, void *val)
{
	return insert(m, key, val, 0);
}

int u32map_add(struct u32map *m, uint32_t key, void *val)
{
	return insert(m, key, val, 1);
}

void *u32map_del(struct u32map *m, uint32_t key)
{
	if (!m->slots)
		return NULL;
	size_t i = home(m, key);
	for (;; i = (i + 1) & m->mask) {
		if (!m->slots[i].val)
			return NULL;
		if (m->slots[i].key == key)
			break;
	}
	void *val = m->slots[i].val;
	/* Shift back the following entries that the hole would cut from home. */
	size_t hole = i;
	for (size_t j = (i + 1) & m->mask; m->slots[j].val; j = (j + 1) & m->mask) {
		size_t h = home(m, m->slots[j].key);
		/* j may move to the hole if its home is not in (hole, j]. */
		if (((j - h) & m->mask) >= ((j - hole) & m->mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].val = NULL;
	m->n--;
	return val;
}
