/* Captures what a call writes to stderr, to check the exact messages. */
#ifndef OVNI_TEST_CAPTURE_H
#define OVNI_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cap_saved = -1;
static FILE *cap_file;

static void capture_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

/* Returns the captured text (static buffer, NUL terminated). */
static const char *capture_end(void)
{
	static char text[8192];
	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(text, 1, sizeof(text) - 1, cap_file);
	text[n] = '\0';
	fclose(cap_file);
	return text;
}

#endif
