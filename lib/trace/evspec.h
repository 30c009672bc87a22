/* The event description language (seed 000, spec runtime.md 6): a signature
 * "MCV[+][(type name, ...)]" gives the payload layout; a description with
 * %{name} and %FMT{name} conversions explains an event in words. */
#ifndef OVNI_EVSPEC_H
#define OVNI_EVSPEC_H

#include <stddef.h>
#include <stdint.h>

#include "trace/stream.h"

enum evarg_type { EVARG_U8, EVARG_U16, EVARG_U32, EVARG_U64, EVARG_I8, EVARG_I16, EVARG_I32, EVARG_I64, EVARG_STR };

#define EVSPEC_MAX_ARGS 16
#define EVSPEC_MAX_NAME 63

struct evarg {
	enum evarg_type type;
	uint16_t offset; /* in the payload; jumbo arguments start at 4 */
	char name[EVSPEC_MAX_NAME + 1];
};

struct evspec_piece; /* compiled description, private to evspec.c */

struct evspec {
	uint8_t mcv[3];
	int jumbo;
	int nargs;
	struct evarg args[EVSPEC_MAX_ARGS];
	const char *sig, *desc; /* as given to evspec_parse, not copied */
	struct evspec_piece *pieces;
	int npieces;
	uint32_t payload_min; /* payload bytes the arguments need (a str at least its NUL) */
	int str_arg; /* index of the str argument (always the last), -1 if none */
};

/* Parses sig and compiles desc (NULL: no description). sig and desc must
 * outlive s. Besides runtime.md 6 it refuses what could never describe an
 * event: duplicate names, an argument after a str, more than 16 payload
 * bytes in a normal event. Returns 0, or -1 after failf. */
int evspec_parse(struct evspec *s, const char *sig, const char *desc);
void evspec_free(struct evspec *s);

/* Name of an argument type as written in signatures ("u32", "str"). */
const char *evarg_type_name(enum evarg_type t);
/* 1 if ev's payload holds every argument of s (jumbo flag as declared
 * unless s has no arguments, long enough, str NUL-terminated inside it),
 * else 0. */
int evspec_fits(const struct evspec *s, const struct ev *ev);

/* Writes the description of ev into dst with a final NUL. Returns its
 * length (< cap), or -1 when the payload does not fit the signature
 * (evspec_fits) or the text does not fit in cap. Never reads past the
 * payload. */
int evspec_describe(const struct evspec *s, const struct ev *ev, char *dst, size_t cap);

/* Argument i of ev: integers in *i64 (signed types) or *u64 (unsigned),
 * strings in *str; any pointer may be NULL. Returns -1 if the payload does
 * not fit the signature (evspec_fits). */
int evspec_arg(const struct evspec *s, int i, const struct ev *ev, int64_t *i64, uint64_t *u64, const char **str);

#endif
