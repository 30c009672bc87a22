/* A strict JSON parser and writer of our own. Errors carry line and column.
 * The pretty writer matches the layout of the reference's stream.json:
 * 4-space indent, keys in insertion order, numbers as %1.17g, '/' escaped
 * as "\/", no trailing newline. Plain C: the preload shim uses it too. */
#ifndef OVNI_JSON_H
#define OVNI_JSON_H

#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	int line, col; /* where the value starts, 1-based (0 if built in memory) */
	unsigned flags; /* how its memory is held (json.c) */
	union {
		int boolean;
		double number;
		struct { char *s; size_t len; } str;
		struct { struct json **items; size_t n, cap; } arr;
		struct { char **keys; struct json **vals; size_t n, cap; } obj;
	} u;
};

/* NULL on error, after failf("line L, column C: what"). Comments (// and
 * block) are accepted as whitespace. A parsed document keeps all its parts
 * in a few big blocks: read the fields freely, but change it only through
 * json_set, json_dotset and json_append. */
struct json *json_parse(const char *text, size_t len);
/* As json_parse on a file; the reason then starts with the path. */
struct json *json_parse_file(const char *path);
/* Frees v and what it holds. A value detached from a parsed document (by
 * json_set replacing it) keeps its memory until the document is freed. */
void json_free(struct json *v);

/* Lookups return NULL when absent or when v is not an object. */
struct json *json_get(const struct json *v, const char *key);
struct json *json_dotget(const struct json *v, const char *dotpath);

struct json *json_new(enum json_type type); /* empty object/array, null, false, 0 */
struct json *json_new_number(double n);
struct json *json_new_string(const char *s);
struct json *json_new_bool(int b);
/* Takes ownership of val, even on failure (val is then freed, and NULL is
 * accepted): json_set(o, "k", json_new_number(1)) never leaks. Replaces an
 * existing key in place. -1 if no memory or obj is not an object. */
int json_set(struct json *obj, const char *key, struct json *val);
/* Removes key and frees its value; 0 also when absent, -1 if no memory. */
int json_del(struct json *obj, const char *key);
/* Like json_set on a dot path, creating missing objects on the way. */
int json_dotset(struct json *obj, const char *dotpath, struct json *val);
int json_append(struct json *arr, struct json *val); /* same ownership rule */
struct json *json_copy(const struct json *v);

/* malloc'd text (NUL terminated), *len set if len is not NULL. */
char *json_write_pretty(const struct json *v, size_t *len);
char *json_write_compact(const struct json *v, size_t *len);

/* Helpers for integers stored as numbers: 0 if v is a number with an exact
 * int64 value, else -1. */
int json_int(const struct json *v, long long *out);
const char *json_type_name(enum json_type t);

#endif
