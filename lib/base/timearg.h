/* Time arguments of --from/--to (dump, emu, report, export): a duration
 * from the start of the trace with a unit ("1.5s", "200ms", "30us",
 * "12ns"), or "@CLOCK", a clock in ns in the trace's own time base (the
 * raw clock for one node; clock offsets applied otherwise). A bare number
 * is refused: it could be either. */
#ifndef OVNI_TIMEARG_H
#define OVNI_TIMEARG_H

#include <stdint.h>

struct timearg {
	int64_t ns; /* from the start, or the clock with raw */
	int raw; /* given as @CLOCK */
	int set;
};

/* A --from/--to pair; either may be unset. */
struct timewin {
	struct timearg from, to;
};

/* Parses s for option opt ("--from"). -1 after a one-line message. */
int timearg_parse(struct timearg *t, const char *s, const char *opt);

/* Whether either end is set. */
static inline int timewin_set(const struct timewin *w) { return w->from.set || w->to.set; }

/* The window as clocks in the base of @CLOCK, given the clock of the
 * first event of the trace (start): an unset from is INT64_MIN, an unset to
 * INT64_MAX. An empty (from == to) or inverted window is refused: -1 after
 * a one-line message. */
int timewin_resolve(const struct timewin *w, int64_t start, int64_t *from, int64_t *to);

/* "1.5s"-style text of ns (exact: as many decimals as needed, at most
 * 9) into buf (32 bytes); for messages and tables. */
const char *timearg_str(int64_t ns, char *buf);

#endif
