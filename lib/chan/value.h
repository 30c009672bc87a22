/* A channel value: null or a 64-bit integer. Null always has i == 0, so two
 * values are equal exactly when both fields are. */
#ifndef OVNI_CHAN_VALUE_H
#define OVNI_CHAN_VALUE_H

#include <stddef.h>
#include <stdint.h>

enum value_kind { VALUE_NULL = 0, VALUE_INT64 = 1 };

struct value {
	int64_t i;
	int kind;
};

static inline struct value value_null(void)
{
	struct value v = { 0, VALUE_NULL };
	return v;
}

static inline struct value value_int64(int64_t i)
{
	struct value v = { i, VALUE_INT64 };
	return v;
}

static inline int value_is_null(struct value v) { return v.kind == VALUE_NULL; }

static inline int value_eq(struct value a, struct value b)
{
	return a.kind == b.kind && a.i == b.i;
}

/* "null" or the number, for messages; buf needs 24 bytes. */
const char *value_str(struct value v, char *buf);

#endif
