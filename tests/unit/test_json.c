/* JSON parser and writers: values, errors with line:column, limits, and the
 * byte-exact round trip of every stream.json in the golden corpus. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fail.h"
#include "base/json.h"
#include "t.h"

static struct json *parse(const char *s)
{
	return json_parse(s, strlen(s));
}

static void check_error(const char *text, const char *want)
{
	struct json *v = json_parse(text, strlen(text));
	CHECK(v == NULL, "rejects %s", want);
	CHECK_STR(fail_reason(), want, "error message for %s", want);
	json_free(v);
}

static void check_compact(const char *in, const char *want)
{
	struct json *v = parse(in);
	CHECK(v != NULL, "parses %s", in);
	if (!v)
		return;
	char *out = json_write_compact(v, NULL);
	CHECK_STR(out, want, "compact form of %s", in);
	free(out);
	json_free(v);
}

static void test_values(void)
{
	struct json *v = parse(" {\"a\": [1, -2.5e3, true, false, null, \"x\"], \"b\": {}} ");
	CHECK(v && v->type == JSON_OBJECT, "object parsed");
	if (!v)
		return;
	struct json *a = json_get(v, "a");
	CHECK(a && a->type == JSON_ARRAY && a->u.arr.n == 6, "array of 6");
	CHECK(a->u.arr.items[1]->u.number == -2500.0, "exponent number");
	CHECK(a->u.arr.items[2]->type == JSON_BOOL && a->u.arr.items[2]->u.boolean == 1, "true");
	CHECK(a->u.arr.items[4]->type == JSON_NULL, "null");
	CHECK_STR(a->u.arr.items[5]->u.str.s, "x", "string item");
	CHECK_INT(a->line, 1, "line of a");
	CHECK_INT(a->col, 8, "column of a");
	CHECK(json_get(v, "c") == NULL, "absent key");
	CHECK(json_get(a, "x") == NULL, "get on an array");
	json_free(v);

	v = parse("{\n  \"ovni\": {\n    \"tid\": 12\n  }\n}");
	struct json *tid = json_dotget(v, "ovni.tid");
	long long n = 0;
	CHECK(tid && json_int(tid, &n) == 0 && n == 12, "dotget ovni.tid = 12");
	CHECK_INT(tid->line, 3, "line of tid");
	CHECK_INT(tid->col, 12, "column of tid");
	CHECK(json_dotget(v, "ovni.tid.x") == NULL, "dotget through a number");
	CHECK(json_dotget(v, "ovni.pid") == NULL, "dotget missing");
	json_free(v);
}

static void test_strings(void)
{
	struct json *v = parse("\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00\"");
	CHECK(v && v->type == JSON_STRING, "escapes parsed");
	if (v)
		CHECK_STR(v->u.str.s, "a\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "escapes decoded to UTF-8");
	json_free(v);
	v = parse("\"\\u0000x\"");
	CHECK(v && v->u.str.len == 2 && v->u.str.s[0] == '\0', "NUL escape keeps its length");
	json_free(v);
	v = parse("{\"\": \"\"}");
	CHECK(v && v->u.obj.n == 1 && strcmp(v->u.obj.keys[0], "") == 0, "empty key");
	CHECK(v && v->u.obj.vals[0]->u.str.len == 0 && strcmp(v->u.obj.vals[0]->u.str.s, "") == 0, "empty string");
	json_free(v);
	v = parse("\"caf\xc3\xa9\"");
	CHECK(v && strcmp(v->u.str.s, "caf\xc3\xa9") == 0, "raw UTF-8 accepted");
	json_free(v);
}

static void test_comments(void)
{
	struct json *v = parse("// head\n{ /* a\n b */ \"k\": 1 // tail\n}\n/* end */");
	CHECK(v && json_get(v, "k"), "comments are skipped");
	json_free(v);
	check_error("{\"k\": 1 /* open", "line 1, column 9: unterminated comment");
}

static void test_errors(void)
{
	check_error("", "line 1, column 1: expected a value, found end of input");
	check_error("{\"a\": 1 \"b\": 2}", "line 1, column 9: expected ',' or '}'");
	check_error("{\"a\": 1,}", "line 1, column 9: expected a string key");
	check_error("[1, 2", "line 1, column 6: expected ',' or ']', found end of input");
	check_error("[1,]", "line 1, column 4: expected a value");
	check_error("{\"a\" 1}", "line 1, column 6: expected ':'");
	check_error("{\n  \"abc", "line 2, column 3: unterminated string");
	check_error("\"a\nb\"", "line 1, column 1: unterminated string");
	check_error("\"\\x\"", "line 1, column 2: invalid escape '\\x'");
	check_error("\"\\u12g4\"", "line 1, column 2: invalid \\u escape");
	check_error("\"\\ud800\"", "line 1, column 2: unpaired surrogate in \\u escape");
	check_error("\"\\udc00\"", "line 1, column 2: unpaired surrogate in \\u escape");
	check_error("\"a\tb\"", "line 1, column 3: control character in string");
	check_error("\"\xff\"", "line 1, column 2: invalid UTF-8 in string");
	check_error("\"\xc0\xaf\"", "line 1, column 2: invalid UTF-8 in string");
	check_error("\"\xed\xa0\x80\"", "line 1, column 2: invalid UTF-8 in string");
	check_error("-", "line 1, column 1: invalid number");
	check_error("01", "line 1, column 1: invalid number (leading zero)");
	check_error("1.", "line 1, column 1: invalid number");
	check_error("1e+", "line 1, column 1: invalid number");
	check_error("1e999", "line 1, column 1: number out of range");
	check_error("+1", "line 1, column 1: expected a value");
	check_error("tru", "line 1, column 1: expected a value");
	check_error("truex", "line 1, column 1: expected a value");
	check_error("{} {}", "line 1, column 4: trailing data after the JSON value");
	check_error("{\"a\": 1, \"a\": 2}", "line 1, column 10: duplicate key \"a\"");
	check_error("{\"a\": 1}\n\n  x", "line 3, column 3: trailing data after the JSON value");
	check_error("\xef\xbb\xbf{}", "line 1, column 1: expected a value");
	char nul[] = { '{', '}', '\0' };
	struct json *v = json_parse(nul, sizeof(nul));
	CHECK(v == NULL, "a NUL byte after the value is trailing data");
	json_free(v);
}

static void test_depth(void)
{
	size_t n = 100000;
	char *deep = malloc(2 * n + 1);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	struct json *v = json_parse(deep, 2 * n);
	CHECK(v == NULL, "100000 nested arrays rejected without crashing");
	CHECK_STR(fail_reason(), "line 1, column 513: nesting deeper than 512 levels", "depth error");
	v = json_parse(deep + n - 512, 1024);
	CHECK(v != NULL, "512 nested arrays accepted");
	json_free(v);
	free(deep);
}

static void test_numbers(void)
{
	long long n;
	struct json *v = parse("[0, -0, 3, 123.5, 1e2, 9007199254740993, 9223372036854775807, -9223372036854775808, 0.1]");
	CHECK(v && v->u.arr.n == 9, "numbers parsed");
	if (!v)
		return;
	CHECK(json_int(v->u.arr.items[2], &n) == 0 && n == 3, "json_int 3");
	CHECK(json_int(v->u.arr.items[3], &n) == -1, "json_int rejects 123.5");
	CHECK(json_int(v->u.arr.items[4], &n) == 0 && n == 100, "json_int 1e2");
	CHECK(json_int(v->u.arr.items[6], &n) == -1, "json_int rejects 2^63");
	CHECK(json_int(v->u.arr.items[7], &n) == 0 && n == (-9223372036854775807LL - 1), "json_int -2^63");
	char *out = json_write_compact(v, NULL);
	CHECK_STR(out, "[0,-0,3,123.5,100,9007199254740992,9.2233720368547758e+18,-9.2233720368547758e+18,0.10000000000000001]",
		  "numbers written with %%1.17g");
	free(out);
	json_free(v);
	struct json *s = json_new_string("x");
	CHECK(json_int(s, &n) == -1, "json_int on a string");
	json_free(s);
}

static void test_build(void)
{
	struct json *root = json_new(JSON_OBJECT);
	CHECK(json_set(root, "version", json_new_number(3)) == 0, "set version");
	CHECK(json_dotset(root, "ovni.lib.version", json_new_string("1.14.0")) == 0, "dotset creates objects");
	CHECK(json_dotset(root, "ovni.part", json_new_string("th/read")) == 0, "dotset in existing object");
	CHECK(json_dotset(root, "version.x", json_new_number(1)) == -1, "dotset through a number fails");
	CHECK(json_set(root, "version", json_new_number(4)) == 0, "replace in place");
	struct json *arr = json_new(JSON_ARRAY);
	json_append(arr, json_new_bool(1));
	json_append(arr, json_new(JSON_NULL));
	json_append(arr, json_new(JSON_OBJECT));
	json_append(arr, json_new(JSON_ARRAY));
	json_set(root, "arr", arr);
	struct json *copy = json_copy(root);
	json_free(root);
	size_t len;
	char *out = json_write_pretty(copy, &len);
	const char *want =
		"{\n"
		"    \"version\": 4,\n"
		"    \"ovni\": {\n"
		"        \"lib\": {\n"
		"            \"version\": \"1.14.0\"\n"
		"        },\n"
		"        \"part\": \"th\\/read\"\n"
		"    },\n"
		"    \"arr\": [\n"
		"        true,\n"
		"        null,\n"
		"        {},\n"
		"        []\n"
		"    ]\n"
		"}";
	CHECK_STR(out, want, "pretty layout of a built object");
	CHECK_INT(len, strlen(want), "pretty length");
	free(out);
	out = json_write_compact(copy, NULL);
	CHECK_STR(out, "{\"version\":4,\"ovni\":{\"lib\":{\"version\":\"1.14.0\"},\"part\":\"th\\/read\"},\"arr\":[true,null,{},[]]}",
		  "compact layout");
	free(out);
	json_free(copy);

	check_compact("{\"foo\":42}", "{\"foo\":42}");
	check_compact("\"\\u0001\\u001f\\\"\"", "\"\\u0001\\u001f\\\"\"");
	check_compact("\"\\u00e9\"", "\"\xc3\xa9\"");
}

/* Parsed documents can be changed like built ones, and freed in pieces. */
static void test_edit_parsed(void)
{
	struct json *v = parse("{\"a\": {\"b\": [1, 2]}, \"c\": \"x\"}");
	CHECK(v != NULL, "parsed a document to edit");
	if (!v)
		return;
	CHECK(json_set(v, "c", json_new_string("y")) == 0, "replace a parsed value");
	CHECK(json_set(v, "d", json_new_number(4)) == 0, "add a key to a parsed object");
	CHECK(json_append(json_dotget(v, "a.b"), json_new_bool(0)) == 0, "append to a parsed array");
	CHECK(json_dotset(v, "a.e.f", json_new(JSON_NULL)) == 0, "dotset through a parsed object");
	CHECK(json_set(json_dotget(v, "a"), "b", json_new(JSON_ARRAY)) == 0, "replace a parsed array");
	struct json *copy = json_copy(v);
	char *out = json_write_compact(v, NULL);
	CHECK_STR(out, "{\"a\":{\"b\":[],\"e\":{\"f\":null}},\"c\":\"y\",\"d\":4}", "edited document");
	free(out);
	json_free(v);
	out = json_write_compact(copy, NULL);
	CHECK_STR(out, "{\"a\":{\"b\":[],\"e\":{\"f\":null}},\"c\":\"y\",\"d\":4}", "its copy outlives it");
	free(out);
	json_free(copy);

	/* a key removed, from a parsed object and a built one: the others keep their order */
	v = parse("{\"a\": {\"x\": 1}, \"b\": 2, \"c\": [3]}");
	CHECK(v && json_del(v, "a") == 0 && json_del(v, "nope") == 0, "remove a parsed key, and an absent one");
	CHECK(json_set(v, "d", json_new_number(5)) == 0 && json_del(v, "c") == 0, "remove after an addition");
	out = json_write_compact(v, NULL);
	CHECK_STR(out, "{\"b\":2,\"d\":5}", "what is left of the parsed object");
	free(out);
	json_free(v);
	v = json_new(JSON_OBJECT);
	CHECK(json_dotset(v, "m.99.title", json_new_string("t")) == 0 && json_dotset(v, "m.98", json_new_number(1)) == 0,
	      "built an object to remove from");
	CHECK(json_del(json_get(v, "m"), "99") == 0, "remove a built subtree");
	out = json_write_compact(v, NULL);
	CHECK_STR(out, "{\"m\":{\"98\":1}}", "what is left of the built object");
	free(out);
	json_free(v);

	/* a big object: duplicates are still found, at the repeated key */
	char *big = malloc(200000);
	size_t n = 0;
	n += (size_t)sprintf(big + n, "{");
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(big + n, "%s\"k%d\": %d", i ? ",\n" : "", i == 4000 ? 17 : i, i);
	n += (size_t)sprintf(big + n, "}");
	v = json_parse(big, n);
	CHECK(v == NULL, "5000 keys with one repeated rejected");
	CHECK_STR(fail_reason(), "line 4001, column 1: duplicate key \"k17\"", "at the repeated key");
	big[n - 1] = '\0';
	n = (size_t)sprintf(big, "{");
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(big + n, "%s\"k%d\": %d", i ? "," : "", i, i);
	n += (size_t)sprintf(big + n, "}");
	v = json_parse(big, n);
	CHECK(v && v->u.obj.n == 5000 && json_get(v, "k4999"), "5000 distinct keys accepted");
	json_free(v);
	free(big);
}

static char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	struct stat st;
	fstat(fd, &st);
	char *s = malloc((size_t)st.st_size + 1);
	ssize_t n = read(fd, s, (size_t)st.st_size);
	close(fd);
	*len = n < 0 ? 0 : (size_t)n;
	s[*len] = '\0';
	return s;
}

static int nfiles, nsame;

static void roundtrip(const char *path)
{
	size_t len, olen;
	char *text = read_file(path, &len);
	struct json *v = json_parse_file(path);
	nfiles++;
	if (!v || !text) {
		CHECK(0, "parse %s: %s", path, fail_reason());
		free(text);
		return;
	}
	char *out = json_write_pretty(v, &olen);
	if (olen == len && memcmp(out, text, len) == 0)
		nsame++;
	else
		CHECK(0, "round trip of %s", path);
	free(out);
	free(text);
	json_free(v);
}

static void walk(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(path);
		else if (strcmp(e->d_name, "stream.json") == 0)
			roundtrip(path);
	}
	closedir(d);
}

static void test_golden(void)
{
	walk("tests/golden");
	CHECK(nfiles >= 100, "found the golden stream.json files (%d)", nfiles);
	CHECK_INT(nsame, nfiles, "every golden stream.json parses and pretty-writes to the same bytes");
}

/* Every truncation and many byte changes of a real file: never a crash, and
 * every refusal says where. */
static void test_damage(void)
{
	size_t len;
	char *text = read_file("tests/golden/nosv/hwc/trace/loom.vm.0/proc.22042/thread.22042/stream.json", &len);
	if (!text) {
		CHECK(0, "read the hwc stream.json");
		return;
	}
	int bad = 0, accepted = 0, runs = 0;
	for (size_t n = 0; n < len; n++) {
		struct json *v = json_parse(text, n);
		runs++;
		if (v) {
			accepted++;
			json_free(v);
		} else if (strncmp(fail_reason(), "line ", 5) != 0) {
			bad++;
		}
	}
	CHECK_INT(accepted, 0, "no proper prefix of an object parses (%d tried)", runs);
	unsigned seed = 12345;
	const char swaps[] = "{}[]\",:\\/ \nx0-.eE\x80\xff\x01";
	for (int i = 0; i < 20000; i++) {
		char *copy = malloc(len);
		memcpy(copy, text, len);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245 + 12345;
			copy[at] = swaps[(seed >> 8) % (sizeof(swaps) - 1)];
		}
		struct json *v = json_parse(copy, len);
		runs++;
		if (v) {
			char *out = json_write_compact(v, NULL);
			if (!out)
				bad++;
			free(out);
			json_free(v);
		} else if (strncmp(fail_reason(), "line ", 5) != 0 || !strstr(fail_reason(), ", column ")) {
			bad++;
		}
		free(copy);
	}
	CHECK_INT(bad, 0, "%d damaged inputs: every refusal has line and column", runs);
	free(text);
}

static void test_file_errors(void)
{
	char dir[] = "/tmp/ovni-json-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	char path[256], want[512];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\n    \"version\": 3,\n    \"ovni\": {\n        \"tid\": 1\n    \n}\n", f);
	fclose(f);
	struct json *v = json_parse_file(path);
	CHECK(v == NULL, "truncated file rejected");
	snprintf(want, sizeof(want), "%s: line 7, column 1: expected ',' or '}', found end of input", path);
	CHECK_STR(fail_reason(), want, "file error names the path, line and column");
	unlink(path);
	v = json_parse_file(path);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	CHECK(v == NULL, "missing file rejected");
	CHECK_STR(fail_reason(), want, "missing file message");
	v = json_parse_file(dir);
	CHECK(v == NULL, "a directory is not a JSON file");
	CHECK(strstr(fail_reason(), dir) == fail_reason(), "directory error names the path: %s", fail_reason());
	rmdir(dir);
}

int main(void)
{
	test_values();
	test_strings();
	test_comments();
	test_errors();
	test_depth();
	test_numbers();
	test_build();
	test_edit_parsed();
	test_golden();
	test_damage();
	test_file_errors();
	return t_done();
}
