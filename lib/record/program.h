/* Just enough ELF to know whether a program can take a preloaded library. */
#ifndef OVNI_PROGRAM_H
#define OVNI_PROGRAM_H

#include <stddef.h>

/* The file execvp would run for name (searched in PATH without a '/'):
 * 0 with path filled, -1 if none. */
int elf_find_program(const char *name, char *path, size_t n);
/* 1: an ELF executable without a program interpreter (statically linked),
 * 0: dynamically linked or not ELF (a script), -1: unreadable. The
 * interpreter's path goes to interp (empty if none or too long). */
int elf_is_static(const char *path, char *interp, size_t n);

#endif
