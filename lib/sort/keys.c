/* The stable sort of window keys, shared by the streaming engine and the
 * in-place file sort. */
#include "sort/keys.h"

#include <string.h>

#define SMALL_SORT 32

static void key_insertion_sort(struct key *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct key k = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1].clock > k.clock; j--)
			a[j] = a[j - 1];
		a[j] = k;
	}
}

/* Merges a[0,na) and b[0,nb) into dst; on equal clocks a goes first. */
static void key_merge(const struct key *a, size_t na, const struct key *b, size_t nb, struct key *dst)
{
	size_t i = 0, j = 0;
	while (i < na && j < nb)
		*dst++ = b[j].clock < a[i].clock ? b[j++] : a[i++];
	while (i < na)
		*dst++ = a[i++];
	while (j < nb)
		*dst++ = b[j++];
}

/* Stable: equal clocks keep their order. */
void key_sort(struct key *a, struct key *tmp, size_t n)
{
	for (size_t i = 0; i < n; i += SMALL_SORT)
		key_insertion_sort(a + i, n - i < SMALL_SORT ? n - i : SMALL_SORT);
	struct key *src = a, *dst = tmp;
	for (size_t w = SMALL_SORT; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			key_merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
		}
		struct key *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

