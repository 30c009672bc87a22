/* Why something failed, handed up to the caller that can name the file,
 * the offset or the event in its one-line message (docs/design.md,
 * Errors): the emulation's channels, muxes, writers and models, the JSON
 * parser and the event description language record the reason here
 * instead of printing. Per thread. */
#ifndef OVNI_BASE_FAIL_H
#define OVNI_BASE_FAIL_H

/* Records the reason and returns -1. A second failure before fail_clear()
 * keeps the first, innermost reason. */
int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The recorded reason, or "" if none. */
const char *fail_reason(void);
void fail_clear(void);
/* The recorded reason, for the one message that reports it; the next
 * failure records its own. The text stays valid until then. */
const char *fail_take(void);

#endif
