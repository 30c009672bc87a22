/* Messages to the user: one line each on stderr, prefixed by the program name. */
#ifndef OVNI_IO_MSG_H
#define OVNI_IO_MSG_H

#include <stddef.h>

/* Set once by the dispatcher: "ovni dump", "ovniemu", ... */
void msg_set_prog(const char *name);
const char *msg_prog(void);

/* "<prog>: error: <text>" */
void msg_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog>: warning: <text>" */
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<prog>: <text>", only when not quiet */
void msg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msg_set_quiet(int quiet);
/* msg_info of a preformatted text of n bytes (no newline): no printf. */
void msg_info_str(const char *text, size_t n);
/* While on, info lines are kept in a buffer, written when it fills, before
 * any warning or error, and when hold ends (msg_hold(0)) or msg_flush(). */
void msg_hold(int on);
void msg_flush(void);

/* Print an error and exit(1); for the cmd/ layer only, never inside lib/. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
