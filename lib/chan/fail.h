/* Why the emulation failed, kept for the one-line error the emulator prints
 * with the event that caused it (stream, offset, MCV, clock). Channels,
 * muxes, writers and models record the reason here instead of printing. */
#ifndef OVNI_CHAN_FAIL_H
#define OVNI_CHAN_FAIL_H

/* Records the reason and returns -1. A second failure before fail_clear()
 * keeps the first, innermost reason. */
int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The recorded reason, or "" if none. */
const char *fail_reason(void);
void fail_clear(void);

#endif
