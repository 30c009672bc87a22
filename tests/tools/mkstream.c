/* mkstream: writes a stream.obs described line by line on standard input,
 * for tests that need exact (or exactly broken) bytes. `mkstream --help`. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/stream.h"

static const char usage[] =
	"Usage: mkstream FILE < LINES\n"
	"Writes FILE from lines read on standard input, in order:\n"
	"  header [MAGIC [VERSION]]  the 8-byte stream header (default: ovni 1)\n"
	"  ev MCV CLOCK [HEX]        a normal event; HEX is its payload (0 or 2..16\n"
	"                            bytes, e.g. 00000000ffffffff)\n"
	"  jumbo MCV CLOCK [HEX]     a jumbo event: the u32 length, then the bytes\n"
	"  raw HEX                   bytes as they are, to damage a stream\n"
	"  cut N                     drop the last N bytes written so far\n"
	"Empty lines and lines starting with # are skipped. Clocks are decimal.\n";

static uint8_t *buf;
static size_t len, cap;

static void need(size_t n)
{
	if (len + n <= cap)
		return;
	cap = (len + n) * 2 + 4096;
	if (!(buf = realloc(buf, cap))) {
		fprintf(stderr, "mkstream: out of memory\n");
		exit(1);
	}
}

static _Noreturn void fail(int line, const char *what)
{
	fprintf(stderr, "mkstream: line %d: %s\n", line, what);
	exit(1);
}

/* Decodes hex digits (spaces allowed) into dst; returns the byte count. */
static size_t unhex(const char *s, uint8_t *dst, size_t max, int line)
{
	size_t n = 0;
	int half = -1;
	for (; *s; s++) {
		if (isspace((unsigned char)*s))
			continue;
		if (!isxdigit((unsigned char)*s))
			fail(line, "bad hex digit");
		int v = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
		if (half < 0) {
			half = v;
			continue;
		}
		if (n == max)
			fail(line, "too many bytes");
		dst[n++] = (uint8_t)(half << 4 | v);
		half = -1;
	}
	if (half >= 0)
		fail(line, "odd number of hex digits");
	return n;
}

static void event(char *rest, int jumbo, int line)
{
	char mcv[4];
	unsigned long long clock;
	int used = 0;
	if (sscanf(rest, " %3s %llu %n", mcv, &clock, &used) < 2 || strlen(mcv) != 3)
		fail(line, "expected MCV CLOCK [HEX]");
	static uint8_t pay[EV_MAX_JUMBO];
	size_t n = unhex(rest + used, pay, jumbo ? sizeof(pay) : EV_MAX_PAYLOAD, line);
	if (!jumbo && n == 1)
		fail(line, "a normal event cannot carry 1 byte");
	need(EV_JUMBO_HEADER_SIZE + n);
	if (jumbo)
		len += ev_encode_jumbo(buf + len, mcv, clock, pay, (uint32_t)n);
	else
		len += ev_encode(buf + len, mcv, clock, pay, n);
}

static void header(char *rest, int line)
{
	char magic[8] = "ovni";
	unsigned version = STREAM_VERSION;
	if (sscanf(rest, " %7s %u", magic, &version) >= 1 && strlen(magic) != 4)
		fail(line, "the magic has 4 characters");
	need(STREAM_HEADER_SIZE);
	memcpy(buf + len, magic, 4);
	uint32_t v = version;
	memcpy(buf + len + 4, &v, 4);
	len += STREAM_HEADER_SIZE;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 2) {
		fputs(usage, stderr);
		return 1;
	}
	static char text[1 << 23];
	int line = 0;
	while (fgets(text, sizeof(text), stdin)) {
		line++;
		text[strcspn(text, "\n")] = '\0';
		char word[16];
		int used = 0;
		if (sscanf(text, " %15s %n", word, &used) < 1 || word[0] == '#')
			continue;
		char *rest = text + used;
		if (!strcmp(word, "header")) {
			header(rest, line);
		} else if (!strcmp(word, "ev") || !strcmp(word, "jumbo")) {
			event(rest, word[0] == 'j', line);
		} else if (!strcmp(word, "raw")) {
			need(strlen(rest) / 2 + 1);
			len += unhex(rest, buf + len, strlen(rest) / 2 + 1, line);
		} else if (!strcmp(word, "cut")) {
			unsigned long n = strtoul(rest, NULL, 10);
			if (n > len)
				fail(line, "cut more than was written");
			len -= n;
		} else {
			fail(line, "unknown keyword (see --help)");
		}
	}
	FILE *f = fopen(argv[1], "wb");
	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f) != 0) {
		fprintf(stderr, "mkstream: cannot write %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	free(buf);
	return 0;
}
