#include "base/fmt.h"

#include <stdlib.h>

#define D10(a) a "0" a "1" a "2" a "3" a "4" a "5" a "6" a "7" a "8" a "9"
const char fmt_digits2[200] = D10("0") D10("1") D10("2") D10("3") D10("4")
	D10("5") D10("6") D10("7") D10("8") D10("9");

/* "0000" to "9999": the last four digits of a clock that moved a little. */
#define D100(a) D10(a "0") D10(a "1") D10(a "2") D10(a "3") D10(a "4") \
	D10(a "5") D10(a "6") D10(a "7") D10(a "8") D10(a "9")
#define D1000(a) D100(a "0") D100(a "1") D100(a "2") D100(a "3") D100(a "4") \
	D100(a "5") D100(a "6") D100(a "7") D100(a "8") D100(a "9")
const char fmt_digits4[40000] = D1000("0") D1000("1") D1000("2") D1000("3") D1000("4")
	D1000("5") D1000("6") D1000("7") D1000("8") D1000("9");

#define H16(a) a "0" a "1" a "2" a "3" a "4" a "5" a "6" a "7" \
	a "8" a "9" a "a" a "b" a "c" a "d" a "e" a "f"
const char fmt_hex2[512] = H16("0") H16("1") H16("2") H16("3") H16("4")
	H16("5") H16("6") H16("7") H16("8") H16("9") H16("a") H16("b")
	H16("c") H16("d") H16("e") H16("f");

char *fmt_shell_word(const char *s)
{
	int plain = *s && !s[strcspn(s, " \t\n'\"\\$`;&|<>()*?")];
	char *w = malloc(plain ? strlen(s) + 1 : 4 * strlen(s) + 3), *d = w;
	if (!w)
		return NULL;
	if (!plain)
		*d++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') { /* never in a plain word */
			memcpy(d, "'\\''", 4);
			d += 4;
		} else {
			*d++ = (unsigned char)*c < 0x20 ? '?' : *c;
		}
	}
	if (!plain)
		*d++ = '\'';
	*d = '\0';
	return w;
}
