/* The event description language (seed 000, spec runtime.md 6): a signature
 * "MCV[+][(type name, ...)]" gives the payload layout; a description with
 * %{name} and %FMT{name} conversions explains an event in words. */
#ifndef OVNI_EVSPEC_H
#define OVNI_EVSPEC_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

enum evarg_type { EVARG_U8, EVARG_U16, EVARG_U32, EVARG_U64, EVARG_I8, EVARG_I16, EVARG_I32, EVARG_I64, EVARG_STR };

#define EVSPEC_MAX_ARGS 16

struct evarg {
	enum evarg_type type;
	uint16_t offset; /* in the payload; jumbo arguments start at 4 */
	char name[64];
};

struct evspec_piece; /* compiled description, private to evspec.c */

struct evspec {
	uint8_t mcv[3];
	int jumbo;
	int nargs;
	struct evarg args[EVSPEC_MAX_ARGS];
	const char *sig, *desc;
	struct evspec_piece *pieces;
	int npieces;
};

/* Parses sig and compiles desc. Returns 0 or -1 with a reason in err. */
int evspec_parse(struct evspec *s, const char *sig, const char *desc, char *err, size_t errlen);
void evspec_free(struct evspec *s);

/* Writes the description of ev into dst. Returns its length, or -1 when the
 * payload is too short for the signature or the text does not fit. */
int evspec_describe(const struct evspec *s, const struct ev *ev, char *dst, size_t cap);

/* Argument i of ev: integers in *i64 (signed types) or *u64 (unsigned),
 * strings in *str. Returns -1 if the payload is too short. */
int evspec_arg(const struct evspec *s, int i, const struct ev *ev, int64_t *i64, uint64_t *u64, const char **str);

#endif
