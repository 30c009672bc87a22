/* The processes a recorded program left behind: once it has ended, `ovni
 * record` (their subreaper) still waits for them, says which they are,
 * and passes them the signals that ask the recording to end. */
#ifndef OVNI_LEFTOVER_H
#define OVNI_LEFTOVER_H

#include <stddef.h>
#include <sys/types.h>

/* Every descendant of the calling process, parents before their children,
 * from /proc: up to max pids in out; returns how many there are (more than
 * max when out was too short), 0 when /proc cannot say. */
size_t leftover_list(pid_t *out, size_t max);

/* "PID (NAME), PID (NAME), ..." of the n pids into buf, cut with "..."
 * when it does not fit; a process already gone is left out. */
void leftover_names(const pid_t *pids, size_t n, char *buf, size_t len);

/* Sends sig to every descendant; returns how many were sent it. */
size_t leftover_signal(int sig);

#endif
