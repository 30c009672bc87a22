#include "io/fmt.h"

#define D10(a) a "0" a "1" a "2" a "3" a "4" a "5" a "6" a "7" a "8" a "9"
const char fmt_digits2[200] = D10("0") D10("1") D10("2") D10("3") D10("4")
	D10("5") D10("6") D10("7") D10("8") D10("9");

#define H16(a) a "0" a "1" a "2" a "3" a "4" a "5" a "6" a "7" \
	a "8" a "9" a "a" a "b" a "c" a "d" a "e" a "f"
const char fmt_hex2[512] = H16("0") H16("1") H16("2") H16("3") H16("4")
	H16("5") H16("6") H16("7") H16("8") H16("9") H16("a") H16("b")
	H16("c") H16("d") H16("e") H16("f");
