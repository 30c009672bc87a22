#include "dump/evcount.h"

#include <stdlib.h>
#include <string.h>

#include "base/msg.h"

static size_t slot(uint32_t key, size_t cap)
{
	return (size_t)(key * 2654435761u) & (cap - 1);
}

static void free_table(struct evcount *c)
{
	free(c->keys);
	free(c->counts);
	c->keys = NULL;
	c->counts = NULL;
	c->cap = c->n = 0;
}

static int alloc_table(struct evcount *c, size_t cap)
{
	c->keys = calloc(cap, sizeof(*c->keys));
	c->counts = calloc(cap, sizeof(*c->counts));
	c->cap = cap;
	c->n = 0;
	if (!c->keys || !c->counts) {
		msg_err("out of memory counting events");
		free_table(c);
		return -1;
	}
	return 0;
}

int evcount_init(struct evcount *c)
{
	c->nblocks = 0;
	c->ascii = calloc(EVCOUNT_ASCII, sizeof(*c->ascii));
	if (!c->ascii) {
		msg_err("out of memory counting events");
		return -1;
	}
	return alloc_table(c, 256);
}

static void put(struct evcount *c, uint32_t key, uint64_t count)
{
	size_t i = slot(key, c->cap);
	while (c->keys[i] && c->keys[i] != key)
		i = (i + 1) & (c->cap - 1);
	if (!c->keys[i]) {
		c->keys[i] = key;
		c->n++;
	}
	c->counts[i] += count;
}

static int grow(struct evcount *c)
{
	struct evcount old = *c;
	if (alloc_table(c, old.cap * 2) < 0) {
		*c = old; /* the counts so far stay */
		return -1;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i])
			put(c, old.keys[i], old.counts[i]);
	free_table(&old);
	return 0;
}

int evcount_add_slow(struct evcount *c, const uint8_t mcv[3])
{
	if (!c->keys || !c->ascii)
		return -1;
	if (!((mcv[0] | mcv[1] | mcv[2]) & 0x80)) {
		uint64_t **block = &c->ascii[(uint32_t)mcv[0] << 7 | mcv[1]];
		if (!(*block = calloc(128, sizeof(**block)))) {
			msg_err("out of memory counting events");
			return -1;
		}
		c->nblocks++;
		(*block)[mcv[2]]++;
		return 0;
	}
	if (2 * (c->n + 1) > c->cap && grow(c) < 0)
		return -1;
	put(c, 1 + ((uint32_t)mcv[0] | (uint32_t)mcv[1] << 8 | (uint32_t)mcv[2] << 16), 1);
	return 0;
}

int evcount_play(struct evcount *c, struct player *p)
{
	struct player_ev pe;
	int r;
	while ((r = player_next(p, &pe)) == 1)
		if (evcount_add(c, pe.ev->mcv) < 0)
			return -1;
	return r;
}

struct row {
	char mcv[4];
	uint64_t count;
};

static int by_count(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->mcv, b->mcv);
}

int evcount_print(const struct evcount *c, struct out *o)
{
	size_t max = c->n + 128 * c->nblocks;
	struct row *rows = malloc((max ? max : 1) * sizeof(*rows));
	if (!rows) {
		msg_err("out of memory");
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->keys[i])
			continue;
		uint32_t m = c->keys[i] - 1;
		rows[n] = (struct row){ { (char)m, (char)(m >> 8), (char)(m >> 16), '\0' }, c->counts[i] };
		n++;
	}
	for (uint32_t b = 0; b < EVCOUNT_ASCII; b++)
		for (uint32_t k = 0; c->ascii[b] && k < 128; k++)
			if (c->ascii[b][k])
				rows[n++] = (struct row){ { (char)(b >> 7), (char)(b & 127), (char)k, '\0' },
							  c->ascii[b][k] };
	qsort(rows, n, sizeof(*rows), by_count);
	for (size_t i = 0; i < n; i++) {
		char *d = out_reserve(o, 4 + 1 + 21 + 1);
		size_t len = strlen(rows[i].mcv);
		memcpy(d, rows[i].mcv, len);
		d[len++] = ' ';
		len += fmt_u64_pad(d + len, rows[i].count, 10, ' ');
		d[len++] = '\n';
		out_commit(o, len);
	}
	free(rows);
	return 0;
}

void evcount_free(struct evcount *c)
{
	for (uint32_t b = 0; c->ascii && b < EVCOUNT_ASCII; b++)
		free(c->ascii[b]);
	free(c->ascii);
	c->ascii = NULL;
	c->nblocks = 0;
	free_table(c);
}
