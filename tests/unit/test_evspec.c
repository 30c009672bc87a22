/* The event description language: signatures, layouts, descriptions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "trace/evspec.h"
#include "t.h"

static int parses(const char *sig, const char *desc)
{
	struct evspec s;
	int r = evspec_parse(&s, sig, desc);
	if (r == 0)
		evspec_free(&s);
	return r == 0;
}

static void accepts(const char *sig, const char *desc)
{
	struct evspec s;
	int r = evspec_parse(&s, sig, desc);
	if (!CHECK(r == 0, "accepts \"%s\" \"%s\"", sig, desc ? desc : "(null)"))
		printf("#   %s\n", fail_reason());
	if (r == 0)
		evspec_free(&s);
}

/* Rejected, with a reason that mentions want. */
static void rejects(const char *sig, const char *desc, const char *want)
{
	struct evspec s;
	int r = evspec_parse(&s, sig, desc);
	if (!CHECK(r < 0 && strstr(fail_reason(), want), "rejects \"%s\" \"%s\" (%s)", sig, desc ? desc : "(null)", want))
		printf("#   got %d: '%s'\n", r, fail_reason());
	if (r == 0)
		evspec_free(&s);
}

static void test_signatures(void)
{
	accepts("OHp", NULL);
	accepts("OAs(i32 cpu)", NULL);
	accepts("OHC(i32 cpu, u64 tag)", NULL);
	accepts("VYc+(u32 typeid, str label)", NULL);
	accepts("OM[(i64 value, i32 type)", NULL);
	accepts("6W*", NULL);
	accepts("X~!(u8 a,u8 b)", NULL);
	accepts("Xab(  u8 a ,  u16 b  )", NULL);
	accepts("Xab(u8 a-b.c)", NULL); /* names are anything visible but ',' and ')' */
	accepts("Xab(str s)", NULL);
	accepts("Xab(u64 a, u64 b)", NULL); /* exactly 16 bytes */
	accepts("Xab+(u8 a1, u8 a2, u8 a3, u8 a4, u8 a5, u8 a6, u8 a7, u8 a8, u8 a9, u8 a10, u8 a11, u8 a12, u8 a13, u8 a14, u8 a15, u8 a16)", NULL);
	accepts("Xab(u8 abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabc)", NULL); /* 63 */

	rejects("", NULL, "three visible");
	rejects("OH", NULL, "three visible");
	rejects("O H", NULL, "three visible");
	rejects("OH\t", NULL, "three visible");
	rejects("OHx+", NULL, "jumbo event needs arguments");
	rejects("OHx()", NULL, "empty arguments");
	rejects("OHx+()", NULL, "empty arguments");
	rejects("OHx( )", NULL, "empty arguments");
	rejects("OHxy", NULL, "expected '('");
	rejects("OHx (u8 a)", NULL, "expected '('");
	rejects("OHx(", NULL, "missing type");
	rejects("OHx(u8 a", NULL, "missing ')'");
	rejects("OHx(u8 a u8 b)", NULL, "expected ',' or ')'");
	rejects("OHx(u8)", NULL, "expected a space");
	rejects("OHx(u8 )", NULL, "missing name");
	rejects("OHx(u8 a,)", NULL, "missing type");
	rejects("OHx(u8 a, , u8 b)", NULL, "missing type");
	rejects("OHx(u9 a)", NULL, "unknown type 'u9'");
	rejects("OHx(int a)", NULL, "unknown type 'int'");
	rejects("OHx(U8 a)", NULL, "unknown type");
	rejects("OHx(u8 a) ", NULL, "after ')'");
	rejects("OHx(u8 a)(u8 b)", NULL, "after ')'");
	rejects("OHx(u8 a, i8 a)", NULL, "used twice");
	rejects("OHx+(str s, u32 n)", NULL, "str argument must be the last");
	rejects("OHx(u64 a, u64 b, u8 c)", NULL, "more than the 16");
	rejects("Xab+(u8 a1, u8 a2, u8 a3, u8 a4, u8 a5, u8 a6, u8 a7, u8 a8, u8 a9, u8 a10, u8 a11, u8 a12, u8 a13, u8 a14, u8 a15, u8 a16, u8 a17)", NULL, "more than 16 arguments");
	rejects("Xab(u8 abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd)", NULL, "longer than 63");
	CHECK(!parses(NULL, NULL), "rejects a NULL signature");
}

static void test_layout(void)
{
	struct evspec s;
	CHECK(evspec_parse(&s, "OHx(i32 cpu, i32 tid, u64 tag)", NULL) == 0, "parse OHx");
	CHECK(memcmp(s.mcv, "OHx", 3) == 0 && !s.jumbo && s.nargs == 3, "OHx: MCV, normal, 3 args");
	CHECK(s.args[0].type == EVARG_I32 && s.args[1].type == EVARG_I32 && s.args[2].type == EVARG_U64, "OHx: types");
	CHECK(s.args[0].offset == 0 && s.args[1].offset == 4 && s.args[2].offset == 8, "OHx: offsets 0 4 8");
	CHECK_STR(s.args[2].name, "tag", "OHx: third name");
	CHECK_INT(s.payload_min, 16, "OHx: needs 16 bytes");
	evspec_free(&s);

	CHECK(evspec_parse(&s, "Xab(u8 a, u16 b, u32 c, u64 d)", NULL) == 0, "parse every unsigned size");
	CHECK(s.args[0].offset == 0 && s.args[1].offset == 1 && s.args[2].offset == 3 && s.args[3].offset == 7,
	      "offsets are cumulative sizes 0 1 3 7");
	CHECK_INT(s.payload_min, 15, "u8+u16+u32+u64 need 15 bytes");
	evspec_free(&s);

	CHECK(evspec_parse(&s, "Xab(i8 a, i16 b, i32 c, i64 d)", NULL) == 0, "parse every signed size");
	CHECK(s.args[0].type == EVARG_I8 && s.args[1].type == EVARG_I16 && s.args[2].type == EVARG_I32 &&
	      s.args[3].type == EVARG_I64, "signed types");
	CHECK(s.args[3].offset == 7, "i64 after i8+i16+i32 at 7");
	evspec_free(&s);

	CHECK(evspec_parse(&s, "VYc+(u32 typeid, str label)", NULL) == 0, "parse VYc+");
	CHECK(s.jumbo && s.nargs == 2, "VYc: jumbo with 2 args");
	CHECK(s.args[0].offset == 4 && s.args[1].offset == 8, "jumbo offsets start at 4: 4 8");
	CHECK(s.args[1].type == EVARG_STR && s.str_arg == 1, "VYc: label is the str");
	CHECK_INT(s.payload_min, 9, "VYc: needs the length, typeid and a NUL");
	evspec_free(&s);

	CHECK(evspec_parse(&s, "VWC+(i64 value)", NULL) == 0 && s.args[0].offset == 4,
	      "jumbo i64 at offset 4");
	evspec_free(&s);
	CHECK(evspec_parse(&s, "OHp", NULL) == 0 && s.nargs == 0 && s.payload_min == 0 && s.str_arg == -1,
	      "no arguments: nothing needed");
	evspec_free(&s);
	CHECK_STR(evarg_type_name(EVARG_U16), "u16", "type name u16");
	CHECK_STR(evarg_type_name(EVARG_STR), "str", "type name str");
}

/* An event with exactly n payload bytes in its own allocation, so that
 * ASan catches any read past them. */
struct test_ev {
	struct ev ev;
	uint8_t *buf;
};

static void ev_make(struct test_ev *t, const char *mcv, int jumbo, const void *payload, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->buf = malloc(n ? n : 1);
	if (n)
		memcpy(t->buf, payload, n);
	memcpy(t->ev.mcv, mcv, 3);
	t->ev.flags = jumbo ? EV_FLAG_JUMBO | 0x3 : (uint8_t)(n ? n - 1 : 0);
	t->ev.payload = n ? t->buf : NULL;
	t->ev.payload_size = n;
	t->ev.size = EV_HEADER_SIZE + n;
}

/* A jumbo payload: u32 length, then the bytes. */
static uint32_t jumbo_payload(uint8_t *dst, const void *data, uint32_t n)
{
	memcpy(dst, &n, 4);
	memcpy(dst + 4, data, n);
	return 4 + n;
}

static int describe(const char *sig, const char *desc, const struct ev *ev, char *out, size_t cap)
{
	struct evspec s;
	if (evspec_parse(&s, sig, desc) < 0) {
		snprintf(out, cap, "parse error: %s", fail_reason());
		return -2;
	}
	int r = evspec_describe(&s, ev, out, cap);
	evspec_free(&s);
	return r;
}

/* Describes a normal event with the given payload; checks the text. */
static void check_desc(const char *sig, const char *desc, const void *payload, uint32_t n, const char *want)
{
	struct test_ev t;
	char out[1024];
	ev_make(&t, sig, 0, payload, n);
	int r = describe(sig, desc, &t.ev, out, sizeof(out));
	if (r < 0 && r != -2)
		strcpy(out, "(failed)");
	CHECK_STR(out, want, "\"%s\" with \"%s\"", sig, desc);
	CHECK(r < 0 || (size_t)r == strlen(out), "\"%s\": returned length", desc);
	free(t.buf);
}

struct all_ints {
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
} __attribute__((packed));

struct all_sints {
	int8_t i8;
	int16_t i16;
	int32_t i32;
	int64_t i64;
} __attribute__((packed));

static void test_defaults(void)
{
	const char *usig = "Xab(u8 a, u16 b, u32 c, u64 d)";
	const char *ssig = "Xab(i8 a, i16 b, i32 c, i64 d)";
	const char *all = "%{a} %{b} %{c} %{d}";
	struct all_ints u = { 255, 65535, 4294967295u, UINT64_MAX };
	check_desc(usig, all, &u, sizeof(u), "255 65535 4294967295 18446744073709551615");
	struct all_ints z = { 0, 0, 0, 0 };
	check_desc(usig, all, &z, sizeof(z), "0 0 0 0");
	struct all_sints smin = { INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN };
	check_desc(ssig, all, &smin, sizeof(smin), "-128 -32768 -2147483648 -9223372036854775808");
	struct all_sints smax = { INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX };
	check_desc(ssig, all, &smax, sizeof(smax), "127 32767 2147483647 9223372036854775807");
	struct all_sints neg = { -1, -1, -1, -1 };
	check_desc(ssig, all, &neg, sizeof(neg), "-1 -1 -1 -1");

	int32_t cpu = 7;
	check_desc("OAs(i32 cpu)", "switches to CPU %{cpu}", &cpu, 4, "switches to CPU 7");
	check_desc("OAs(i32 cpu)", "%{cpu}%{cpu}", &cpu, 4, "77");
	check_desc("OAs(i32 cpu)", "", &cpu, 4, "");
	check_desc("OHp", "pauses", NULL, 0, "pauses");
	check_desc("OHp", "100%% sure", NULL, 0, "100% sure");
	check_desc("OHp", "%%%%", NULL, 0, "%%");
	check_desc("OHp", "%%{cpu}", NULL, 0, "%{cpu}");
	check_desc("OHp", "a { b } c", NULL, 0, "a { b } c");

	struct { int64_t value; int32_t type; } __attribute__((packed)) mark = { -5, 3 };
	check_desc("OM[(i64 value, i32 type)", "pushes %{value} on mark %{type}", &mark, sizeof(mark),
		   "pushes -5 on mark 3");

	/* A str in a normal event. */
	check_desc("Xab(u8 n, str s)", "%{n}:%{s}.", "\x05hello\0", 7, "5:hello.");
	check_desc("Xab(str s)", "[%{s}]", "\0", 1, "[]");
}

static void test_formats(void)
{
	struct { int32_t cpu; uint64_t tag; } __attribute__((packed)) ohc = { 3, 0x7f9239c6b6c0ull };
	const char *sig = "OHC(i32 cpu, u64 tag)";
	check_desc(sig, "creates a thread on CPU %{cpu} with tag %#llx{tag}", &ohc, sizeof(ohc),
		   "creates a thread on CPU 3 with tag 0x7f9239c6b6c0");
	check_desc(sig, "[%3d{cpu}]", &ohc, sizeof(ohc), "[  3]");
	check_desc(sig, "[%-3d{cpu}]", &ohc, sizeof(ohc), "[3  ]");
	check_desc(sig, "[%03d{cpu}]", &ohc, sizeof(ohc), "[003]");
	check_desc(sig, "[%+d{cpu}]", &ohc, sizeof(ohc), "[+3]");
	check_desc(sig, "[% d{cpu}]", &ohc, sizeof(ohc), "[ 3]");
	check_desc(sig, "[%.4i{cpu}]", &ohc, sizeof(ohc), "[0003]");
	check_desc(sig, "[%X{tag}]", &ohc, sizeof(ohc), "[7F9239C6B6C0]");
	check_desc(sig, "[%x{tag}]", &ohc, sizeof(ohc), "[7f9239c6b6c0]"); /* a u64 keeps its 64 bits */
	check_desc(sig, "[%lx{tag}]", &ohc, sizeof(ohc), "[7f9239c6b6c0]");
	check_desc(sig, "[%jx{tag}]", &ohc, sizeof(ohc), "[7f9239c6b6c0]");
	check_desc(sig, "[%zu{tag}]", &ohc, sizeof(ohc), "[140266011276992]");
	check_desc(sig, "[%#o{cpu}]", &ohc, sizeof(ohc), "[03]");
	check_desc(sig, "[%u{cpu}]", &ohc, sizeof(ohc), "[3]");
	check_desc(sig, "[%lld{tag}]", &ohc, sizeof(ohc), "[140266011276992]");

	int32_t m1 = -1;
	check_desc("OAs(i32 cpu)", "%x{cpu}", &m1, 4, "ffffffff"); /* as printf with an int */
	check_desc("OAs(i32 cpu)", "%llx{cpu}", &m1, 4, "ffffffffffffffff");
	check_desc("OAs(i32 cpu)", "%u{cpu}", &m1, 4, "4294967295");
	check_desc("OAs(i32 cpu)", "%hhx{cpu}", &m1, 4, "ff");
	check_desc("OAs(i32 cpu)", "%hd{cpu}", &m1, 4, "-1");
	check_desc("OAs(i32 cpu)", "%5d{cpu}|", &m1, 4, "   -1|");
	uint32_t big = 70000;
	check_desc("Xab(u32 v)", "%hu{v}", &big, 4, "4464");
	check_desc("Xab(u32 v)", "%hd{v}", &big, 4, "4464");
	check_desc("Xab(u32 v)", "%d{v}", &big, 4, "70000");
	uint32_t top = 0x80000000u;
	check_desc("Xab(u32 v)", "%d{v}", &top, 4, "-2147483648");
	uint64_t huge = UINT64_MAX;
	check_desc("Xab(u64 v)", "%d{v}", &huge, 8, "-1");
	check_desc("Xab(u64 v)", "%u{v}", &huge, 8, "18446744073709551615");
	int8_t i8 = -2;
	check_desc("Xab(i8 v)", "%d{v} %x{v}", &i8, 1, "-2 fffffffe");

	check_desc("Xab(str s)", "[%8s{s}]", "abc\0", 4, "[     abc]");
	check_desc("Xab(str s)", "[%-8s{s}]", "abc\0", 4, "[abc     ]");
	check_desc("Xab(str s)", "[%.2s{s}]", "abc\0", 4, "[ab]");
	check_desc("Xab(str s)", "[%s{s}]", "abc\0", 4, "[abc]");
}

static void test_bad_descriptions(void)
{
	const char *sig = "Xab(i32 cpu, u64 tag, str label)";
	rejects(sig, "on CPU %{nope}", "no argument named 'nope'");
	rejects(sig, "on CPU %{cpu", "missing '}'");
	rejects(sig, "on CPU %{cp u}", "letters and digits only");
	rejects(sig, "on CPU %{my_arg}", "letters and digits only");
	rejects(sig, "on CPU %{}", "empty argument name");
	rejects(sig, "on CPU %d", "without '{name}'");
	rejects(sig, "50% done", "without '{name}'");
	rejects(sig, "trailing %", "'%' at the end");
	rejects(sig, "%f{cpu}", "d i o u x X");
	rejects(sig, "%c{cpu}", "d i o u x X");
	rejects(sig, "%n{cpu}", "d i o u x X");
	rejects(sig, "%p{cpu}", "d i o u x X");
	rejects(sig, "%s{cpu}", "d i o u x X");
	rejects(sig, "%d{label}", "needs the conversion 's'");
	rejects(sig, "%ls{label}", "no length modifier");
	rejects(sig, "%0s{label}", "flag that does not apply");
	rejects(sig, "%#s{label}", "flag that does not apply");
	rejects(sig, "%#d{cpu}", "flag that does not apply");
	rejects(sig, "%+u{cpu}", "flag that does not apply");
	rejects(sig, "%*d{cpu}", "not a printf conversion");
	rejects(sig, "%.*d{cpu}", "not a printf conversion");
	rejects(sig, "%1000d{cpu}", "more than 3 digits");
	rejects(sig, "%.1000d{cpu}", "more than 3 digits");
	rejects(sig, "%Ld{cpu}", "not a printf conversion");
	rejects(sig, "%l{cpu}", "no conversion letter");
	rejects(sig, "%{cpu} %dd{cpu}", "not a printf conversion");
	rejects(sig, "%x %d{cpu}", "not a printf conversion");
	rejects(sig, "%1234567890123456789012345678901234567890123456789012345678901234d{cpu}", "longer than 63");
	rejects("OHp", "%{cpu}", "no argument named 'cpu'");
	accepts(sig, "%{cpu}%{tag}%{label}%%");
	accepts(sig, "%-+ 0d{cpu} %#-0x{tag} %-20.10s{label}");
}

/* The payload must hold the arguments: else -1 and nothing read past it. */
static void test_payload_checks(void)
{
	struct evspec s;
	char out[256];
	struct test_ev t;
	CHECK(evspec_parse(&s, "OHx(i32 cpu, i32 tid, u64 tag)", "cpu %{cpu} tid %{tid} tag %{tag}") == 0,
	      "parse OHx with a description");
	struct { int32_t cpu, tid; uint64_t tag; } __attribute__((packed)) ohx = { 0, -1, 0 };
	ev_make(&t, "OHx", 0, &ohx, 16);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), 18, "full OHx payload");
	CHECK_STR(out, "cpu 0 tid -1 tag 0", "OHx text");
	free(t.buf);
	for (uint32_t n = 0; n < 16; n++) {
		ev_make(&t, "OHx", 0, &ohx, n);
		CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "OHx with %u payload bytes is refused", n);
		int64_t iv;
		CHECK_INT(evspec_arg(&s, 0, &t.ev, &iv, NULL, NULL), -1, "evspec_arg refuses %u payload bytes", n);
		free(t.buf);
	}
	/* A longer payload than declared is fine. */
	uint8_t longer[16] = { 1 };
	struct evspec s2;
	CHECK(evspec_parse(&s2, "OAs(i32 cpu)", "cpu %{cpu}") == 0, "parse OAs");
	ev_make(&t, "OAs", 0, longer, 16);
	CHECK(evspec_describe(&s2, &t.ev, out, sizeof(out)) == 5 && strcmp(out, "cpu 1") == 0, "payload longer than declared");
	free(t.buf);
	/* Declared normal, written jumbo. */
	uint8_t jp[64];
	uint32_t jn = jumbo_payload(jp, &ohx, 16);
	ev_make(&t, "OHx", 1, jp, jn);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "a jumbo event for a normal signature is refused");
	free(t.buf);
	evspec_free(&s);
	evspec_free(&s2);
	/* Without arguments there is no layout to get wrong. */
	CHECK(evspec_parse(&s, "OB.", "burst") == 0, "parse OB.");
	ev_make(&t, "OB.", 1, jp, jn);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), 5, "a jumbo event for a signature without arguments");
	free(t.buf);
	evspec_free(&s);

	CHECK(evspec_parse(&s, "VYc+(u32 typeid, str label)", "type %{typeid} \"%{label}\"") == 0,
	      "parse VYc+");
	uint8_t data[32];
	uint32_t id = 4;
	memcpy(data, &id, 4);
	memcpy(data + 4, "block computation", 18);
	jn = jumbo_payload(jp, data, 22);
	ev_make(&t, "VYc", 1, jp, jn);
	int r = evspec_describe(&s, &t.ev, out, sizeof(out));
	CHECK_STR(r >= 0 ? out : "(failed)", "type 4 \"block computation\"", "jumbo with a string");
	uint64_t u = 0;
	const char *str = NULL;
	CHECK(evspec_arg(&s, 0, &t.ev, NULL, &u, NULL) == 0 && u == 4, "evspec_arg: typeid");
	CHECK(evspec_arg(&s, 1, &t.ev, NULL, NULL, &str) == 0 && str && strcmp(str, "block computation") == 0,
	      "evspec_arg: label");
	CHECK_INT(evspec_arg(&s, 2, &t.ev, NULL, NULL, &str), -1, "evspec_arg: no argument 2");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 27), 26, "exactly enough room (text and NUL)");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 26), -1, "one byte short");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 10), -1, "far too short");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 0), -1, "no room at all");
	free(t.buf);

	/* The string is not NUL-terminated inside the payload. */
	jn = jumbo_payload(jp, data, 21);
	ev_make(&t, "VYc", 1, jp, jn);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "str without its NUL is refused");
	CHECK_INT(evspec_arg(&s, 1, &t.ev, NULL, NULL, &str), -1, "evspec_arg: str without its NUL");
	free(t.buf);
	jn = jumbo_payload(jp, data, 4);
	ev_make(&t, "VYc", 1, jp, jn);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "no room for the string at all");
	free(t.buf);
	ev_make(&t, "VYc", 1, jp, 6);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "jumbo payload shorter than typeid");
	free(t.buf);
	ev_make(&t, "VYc", 0, jp, 16);
	CHECK_INT(evspec_describe(&s, &t.ev, out, sizeof(out)), -1, "a normal event for a jumbo signature is refused");
	free(t.buf);
	evspec_free(&s);

	/* Integers formatted near the end of the buffer. */
	CHECK(evspec_parse(&s, "Xab(u64 v)", "%{v}") == 0, "parse u64");
	uint64_t max = UINT64_MAX;
	ev_make(&t, "Xab", 0, &max, 8);
	CHECK_INT(evspec_describe(&s, &t.ev, out, 21), 20, "20 digits in 21 bytes");
	CHECK_STR(out, "18446744073709551615", "20 digits");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 20), -1, "20 digits do not fit in 20 bytes");
	evspec_free(&s);
	CHECK(evspec_parse(&s, "Xab(u64 v)", "%#llx{v}") == 0, "parse u64 hex");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 19), 18, "0x and 16 digits in 19 bytes");
	CHECK_INT(evspec_describe(&s, &t.ev, out, 18), -1, "explicit format one byte short");
	free(t.buf);
	evspec_free(&s);
}

int main(void)
{
	test_signatures();
	test_layout();
	test_defaults();
	test_formats();
	test_bad_descriptions();
	test_payload_checks();
	return t_done();
}
