/* Task type values must equal the reference's for the same label. */
#include "base/labelhash.h"
#include "t.h"

int main(void)
{
	/* Known pairs: the spec's example, and labels of golden .pcf files. */
	CHECK_INT(labelhash_type_value("type-3"), 115414439, "type-3");
	CHECK_INT(labelhash_type_value("testtype1"), 1690940984, "testtype1");
	CHECK_INT(labelhash_type_value("testtype7"), 2130928067, "testtype7");
	CHECK_INT(labelhash_type_value("testtype100"), 1454064145, "testtype100");
	CHECK_INT(labelhash_type_value("testtype666"), 267498064, "testtype666");
	/* Long labels go through the 12-byte block loop: check it is used. */
	CHECK(labelhash_jenkins("abcdefghijklmnop", 16) != labelhash_jenkins("abcdefghijklmnoq", 16),
		"the last byte of a long label changes the hash");
	CHECK(labelhash_jenkins("Xbcdefghijklmnop", 16) != labelhash_jenkins("abcdefghijklmnop", 16),
		"the first byte of a long label changes the hash");
	return t_done();
}
