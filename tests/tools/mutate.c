/* mutate: damages one file in place the way disks, crashes and bad copies
 * do, chosen by a seed, so a fuzz run can be replayed. `mutate --help`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"Usage: mutate SEED FILE\n"
	"Applies one damage to FILE, picked by SEED (any integer): flip 1-4\n"
	"bytes, cut it short, insert 1-16 random bytes, append 1-40 random bytes,\n"
	"or overwrite up to 64 bytes with zeros or 0xff. Prints what it did.\n";

static uint64_t rng;

/* splitmix64: a full-period generator from any seed */
static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

static uint8_t *slurp(const char *path, size_t *len, size_t extra)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *b = n >= 0 ? malloc((size_t)n + extra + 1) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = n >= 0 ? (size_t)n : 0;
	return b;
}

int main(int argc, char **argv)
{
	if (argc != 3 || !strcmp(argv[1], "--help")) {
		fputs(usage, argc == 2 ? stdout : stderr);
		return argc == 2 ? 0 : 2;
	}
	rng = strtoull(argv[1], NULL, 0);
	size_t len;
	uint8_t *b = slurp(argv[2], &len, 64);
	if (!b) {
		perror(argv[2]);
		return 1;
	}
	int kind = len ? (int)below(5) : 3;
	size_t at = below(len), n;
	switch (kind) {
	case 0:
		n = 1 + below(4);
		for (size_t i = 0; i < n; i++)
			b[below(len)] ^= (uint8_t)(1 + below(255));
		printf("flipped %zu bytes\n", n);
		break;
	case 1:
		len = below(len + 1);
		printf("cut to %zu bytes\n", len);
		break;
	case 2:
		n = 1 + below(16);
		memmove(b + at + n, b + at, len - at);
		for (size_t i = 0; i < n; i++)
			b[at + i] = (uint8_t)next();
		len += n;
		printf("inserted %zu bytes at %zu\n", n, at);
		break;
	case 3:
		n = 1 + below(40);
		for (size_t i = 0; i < n; i++)
			b[len + i] = (uint8_t)next();
		len += n;
		printf("appended %zu bytes\n", n);
		break;
	default:
		n = 1 + below(64);
		if (n > len - at)
			n = len - at;
		memset(b + at, next() & 1 ? 0xff : 0, n);
		printf("overwrote %zu bytes at %zu\n", n, at);
	}
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(b, 1, len, f) != len || fclose(f) != 0) {
		perror(argv[2]);
		return 1;
	}
	free(b);
	return 0;
}
