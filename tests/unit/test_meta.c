/* meta_load: every key of stream.json, its rules and its one-line messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"
#include "tstream.h"
#include "base/msg.h"
#include "base/json.h"
#include "trace/meta.h"
#include "t.h"
#include "trace/trace.h"

/* A complete thread stream.json; %s is spliced into the "ovni" object. */
static const char *head =
	"{\n"
	"    \"version\": 3,\n"
	"    \"ovni\": {\n"
	"        \"lib\": {\"version\": \"1.14.0\", \"commit\": \"cf025e2\"},\n"
	"        \"part\": \"thread\",\n";

static const char *full_tail =
	"        \"tid\": 11, \"pid\": 10, \"loom\": \"node.1\", \"app_id\": 2,\n"
	"        \"require\": {\"ovni\": \"1.1.0\", \"nosv\": \"2.7.0-rc\"},\n"
	"        \"rank\": 1, \"nranks\": 4,\n"
	"        \"loom_cpus\": [{\"index\": 0, \"phyid\": 8}, {\"index\": 1, \"phyid\": 9}],\n"
	"        \"mark\": {\"1\": {\"title\": \"x\", \"chan_type\": \"single\"}},\n"
	"        \"finished\": 1\n"
	"    }\n"
	"}";

static struct json *doc(const char *body)
{
	struct json *v = json_parse(body, strlen(body));
	if (!v)
		printf("# bad test json: %s\n", fail_reason());
	return v;
}

static struct json *last; /* the metadata points into it until the next load */

/* Runs meta_load on text; returns rc and the captured message. */
static int load_text(const char *text, unsigned flags, struct stream_meta *m, const char **msg)
{
	json_free(last);
	last = doc(text);
	if (!last)
		return -2;
	cap_begin();
	int rc = meta_load(m, last, "t/stream.json", flags);
	*msg = cap_end();
	return rc;
}

static void check_reject(const char *ovni_keys, unsigned flags, const char *want)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s\n    }\n}", head, ovni_keys);
	struct stream_meta m;
	const char *msg;
	int rc = load_text(text, flags, &m, &msg);
	CHECK_INT(rc, -1, "rejects: %s", want);
	char line[1024];
	snprintf(line, sizeof(line), "test: error: t/stream.json: %s\n", want);
	CHECK_STR(msg, line, "message: %s", want);
}

static void test_full(void)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s", head, full_tail);
	struct stream_meta m;
	const char *msg;
	int rc = load_text(text, TRACE_REQUIRE_FINISHED, &m, &msg);
	CHECK_INT(rc, 0, "complete metadata accepted");
	CHECK_STR(msg, "", "no message");
	if (rc)
		return;
	CHECK(m.is_thread, "thread part");
	CHECK_INT(m.tid, 11, "tid");
	CHECK_INT(m.pid, 10, "pid");
	CHECK_STR(m.loom, "node.1", "loom");
	CHECK(m.has_app_id && m.app_id == 2, "app_id");
	CHECK(m.has_rank && m.rank == 1 && m.nranks == 4, "rank and nranks");
	CHECK(m.has_cpus && m.ncpus == 2 && m.cpus[1].index == 1 && m.cpus[1].phyid == 9, "loom_cpus");
	CHECK(m.finished, "finished");
	CHECK_STR(m.lib_version, "1.14.0", "lib version");
	CHECK_STR(m.lib_commit, "cf025e2", "lib commit");
	CHECK_INT(m.nreq, 2, "two requires");
	CHECK_STR(m.req[1].model, "nosv", "require model");
	CHECK(m.req[1].v[0] == 2 && m.req[1].v[1] == 7 && m.req[1].v[2] == 0, "require version parsed");
	CHECK(m.marks && m.marks->type == JSON_OBJECT, "marks");
	meta_free(&m);
}

static void test_minimal(void)
{
	struct stream_meta m;
	const char *msg;
	char text[1024];
	snprintf(text, sizeof(text), "%s%s", head,
		 "        \"tid\": 5, \"pid\": 5, \"loom\": \"vm\"\n    }\n}");
	CHECK_INT(load_text(text, 0, &m, &msg), 0, "dump accepts a stream without require, finished, cpus");
	CHECK(!m.has_app_id && !m.has_rank && !m.has_cpus && !m.finished && m.nreq == 0, "optional keys absent");
	meta_free(&m);

	CHECK_INT(load_text("{\"version\": 3, \"ovni\": {\"part\": \"process\"}}", TRACE_REQUIRE_FINISHED, &m, &msg), 0,
		  "a non-thread part is accepted");
	CHECK(!m.is_thread, "and marked as not a thread");
	CHECK_STR(msg, "", "meta_load itself says nothing about it");
	meta_free(&m);

	snprintf(text, sizeof(text), "%s%s", head,
		 "        \"tid\": 5, \"pid\": 5, \"loom\": \"vm\", \"nranks\": 2\n    }\n}");
	CHECK_INT(load_text(text, 0, &m, &msg), 0, "nranks without rank is ignored");
	CHECK(!m.has_rank, "no rank");
	meta_free(&m);
}

static void test_top(void)
{
	struct stream_meta m;
	const char *msg;
	CHECK_INT(load_text("[]", 0, &m, &msg), -1, "array root rejected");
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 1: stream metadata must be a JSON object\n", "array root message");
	load_text("{\"ovni\": {}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 1: version is missing\n", "missing version");
	load_text("{\n  \"version\": 2, \"ovni\": {}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 2, column 14: metadata version mismatch 2 (expected 3)\n", "version 2");
	load_text("{\"version\": \"3\"}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 13: version must be an integer\n", "string version");
	load_text("{\"version\": 3}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 1: ovni is missing\n", "missing ovni");
	load_text("{\"version\": 3, \"ovni\": 1}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 24: ovni must be an object\n", "ovni not an object");
	load_text("{\"version\": 3, \"ovni\": {}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 24: ovni.part is missing\n", "missing part");
	load_text("{\"version\": 3, \"ovni\": {\"part\": 1}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 33: ovni.part must be a string\n", "part not a string");
}

static void test_rejects(void)
{
	const char *ids = "        \"tid\": 5, \"pid\": 6, \"loom\": \"vm\"";
	char k[1024];
	check_reject("        \"pid\": 6, \"loom\": \"vm\"", 0, "line 3, column 13: ovni.tid is missing");
	check_reject("        \"tid\": 0, \"pid\": 6, \"loom\": \"vm\"", 0, "line 6, column 16: ovni.tid must be a non-zero integer");
	check_reject("        \"tid\": 1.5, \"pid\": 6, \"loom\": \"vm\"", 0, "line 6, column 16: ovni.tid must be a non-zero integer");
	check_reject("        \"tid\": 5, \"loom\": \"vm\"", 0, "line 3, column 13: ovni.pid is missing");
	check_reject("        \"tid\": 5, \"pid\": \"6\", \"loom\": \"vm\"", 0, "line 6, column 26: ovni.pid must be a non-zero integer");
	check_reject("        \"tid\": 5, \"pid\": 6", 0, "line 3, column 13: ovni.loom is missing");
	check_reject("        \"tid\": 5, \"pid\": 6, \"loom\": \"a/b\"", 0,
		     "line 6, column 37: ovni.loom must be a non-empty string without '/'");
	check_reject("        \"tid\": 5, \"pid\": 6, \"loom\": \"\"", 0,
		     "line 6, column 37: ovni.loom must be a non-empty string without '/'");
	check_reject("        \"tid\": 5, \"pid\": 6, \"loom\": 7", 0,
		     "line 6, column 37: ovni.loom must be a non-empty string without '/'");
	snprintf(k, sizeof(k), "%s, \"app_id\": -1", ids);
	check_reject(k, 0, "line 6, column 53: ovni.app_id must be an integer greater than 0");
	snprintf(k, sizeof(k), "%s, \"app_id\": 0, \"finished\": 1, \"require\": {}", ids);
	check_reject(k, TRACE_REQUIRE_FINISHED, "line 6, column 53: ovni.app_id must be an integer greater than 0");
	snprintf(k, sizeof(k), "%s%s, \"app_id\": 0\n    }\n}", head, ids);
	struct stream_meta m;
	const char *msg;
	CHECK_INT(load_text(k, 0, &m, &msg), 0, "app_id 0 (written by the library when unset) is fine for readers");
	meta_free(&m);
	snprintf(k, sizeof(k), "%s, \"rank\": -1, \"nranks\": 2", ids);
	check_reject(k, 0, "line 6, column 51: ovni.rank must be an integer >= 0");
	snprintf(k, sizeof(k), "%s, \"rank\": 0", ids);
	check_reject(k, 0, "line 6, column 51: ovni.nranks is missing (required with ovni.rank)");
	snprintf(k, sizeof(k), "%s, \"rank\": 0, \"nranks\": 0", ids);
	check_reject(k, 0, "line 6, column 64: ovni.nranks must be an integer greater than 0");
	snprintf(k, sizeof(k), "%s, \"rank\": 2, \"nranks\": 2", ids);
	check_reject(k, 0, "line 6, column 51: ovni.rank must be lower than ovni.nranks (2)");
	snprintf(k, sizeof(k), "%s, \"loom_cpus\": []", ids);
	check_reject(k, 0, "line 6, column 56: ovni.loom_cpus must be a non-empty array");
	snprintf(k, sizeof(k), "%s, \"loom_cpus\": {}", ids);
	check_reject(k, 0, "line 6, column 56: ovni.loom_cpus must be a non-empty array");
	snprintf(k, sizeof(k), "%s, \"loom_cpus\": [3]", ids);
	check_reject(k, 0, "line 6, column 57: ovni.loom_cpus[0] must be an object with index and phyid");
	snprintf(k, sizeof(k), "%s, \"loom_cpus\": [{\"index\": 0, \"phyid\": 0}, {\"index\": 1}]", ids);
	check_reject(k, 0, "line 6, column 83: ovni.loom_cpus[1].phyid is missing");
	snprintf(k, sizeof(k), "%s, \"loom_cpus\": [{\"index\": -1, \"phyid\": 0}]", ids);
	check_reject(k, 0, "line 6, column 67: ovni.loom_cpus[0].index must be an integer >= 0");
	snprintf(k, sizeof(k), "%s, \"require\": [\"ovni\"]", ids);
	check_reject(k, 0, "line 6, column 54: ovni.require must be an object of model name -> version");
	snprintf(k, sizeof(k), "%s, \"require\": {\"ovni\": \"1.x\"}", ids);
	check_reject(k, 0, "line 6, column 63: ovni.require.ovni must be a version string such as \"1.2.3\"");
	snprintf(k, sizeof(k), "%s, \"finished\": 1", ids);
	check_reject(k, TRACE_REQUIRE_FINISHED, "line 3, column 13: ovni.require is missing");
	snprintf(k, sizeof(k), "%s, \"mark\": []", ids);
	check_reject(k, 0, "line 6, column 51: ovni.mark must be an object");
}

static void test_finished(void)
{
	const char *hint = "the thread did not end cleanly (it crashed, was killed or never called "
			   "ovni_thread_free); `ovni emu --salvage` ends it at its last event (in a copy), "
			   "and `ovni dump` reads its events";
	char want[512];
	snprintf(want, sizeof(want), "missing ovni.finished: %s", hint);
	/* a crashed thread lacks require too: finished is what gets reported */
	check_reject("        \"tid\": 5, \"pid\": 6, \"loom\": \"vm\"", TRACE_REQUIRE_FINISHED, want);
	snprintf(want, sizeof(want), "line 6, column 21: ovni.finished must be 1: %s", hint);
	check_reject("        \"finished\": 0, \"tid\": 5, \"pid\": 6, \"loom\": \"vm\"", TRACE_REQUIRE_FINISHED, want);
}

static void test_lib(void)
{
	struct stream_meta m;
	const char *msg;
	load_text("{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 1, \"pid\": 1, \"loom\": \"x\"}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 24: ovni.lib is missing\n", "missing lib");
	load_text("{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 1, \"pid\": 1, \"loom\": \"x\", \"lib\": {\"version\": \"1\"}}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 83: ovni.lib.commit is missing\n", "missing lib.commit");
	load_text("{\"version\": 3, \"ovni\": {\"part\": \"thread\", \"tid\": 1, \"pid\": 1, \"loom\": \"x\", \"lib\": {\"version\": 1, \"commit\": \"a\"}}}", 0, &m, &msg);
	CHECK_STR(msg, "test: error: t/stream.json: line 1, column 95: ovni.lib.version must be a string\n", "lib.version type");
}

/* Every key of a real stream.json replaced by values of every type, or
 * removed: meta_load never crashes and every refusal is one line naming the
 * file (the keys that must be there or have a type are all refused). */
static void test_mutations(void)
{
	const char *file = "tests/golden/ovni/libovni-mark/trace/loom.vm.0/proc.21250/thread.21250/stream.json";
	struct json *orig = json_parse_file(file);
	CHECK(orig != NULL, "read %s", file);
	if (!orig)
		return;
	const char *keys[] = { "version", "ovni", "ovni.part", "ovni.tid", "ovni.pid", "ovni.loom", "ovni.app_id",
			       "ovni.rank", "ovni.nranks", "ovni.loom_cpus", "ovni.lib", "ovni.lib.version",
			       "ovni.lib.commit", "ovni.require", "ovni.require.ovni", "ovni.finished", "ovni.mark" };
	const char *values[] = { NULL, "null", "true", "\"x\"", "-1", "0", "1.5", "[]", "{}", "[1]", "[{}]",
				 "{\"a\": 1}", "1e300", "\"\"" };
	int runs = 0, refused = 0, bad = 0;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			struct json *root = json_copy(orig);
			if (values[v]) {
				json_dotset(root, keys[k], json_parse(values[v], strlen(values[v])));
			} else {
				/* removal: rebuild the parent without the key */
				char parent[64];
				snprintf(parent, sizeof(parent), "%s", keys[k]);
				char *dot = strrchr(parent, '.');
				struct json *obj = root;
				const char *leaf = keys[k];
				if (dot) {
					*dot = '\0';
					obj = json_dotget(root, parent);
					leaf = dot + 1;
				}
				for (size_t i = 0; obj && i < obj->u.obj.n; i++) {
					if (strcmp(obj->u.obj.keys[i], leaf) != 0)
						continue;
					free(obj->u.obj.keys[i]);
					json_free(obj->u.obj.vals[i]);
					memmove(&obj->u.obj.keys[i], &obj->u.obj.keys[i + 1], (obj->u.obj.n - i - 1) * sizeof(char *));
					memmove(&obj->u.obj.vals[i], &obj->u.obj.vals[i + 1], (obj->u.obj.n - i - 1) * sizeof(struct json *));
					obj->u.obj.n--;
					break;
				}
			}
			struct stream_meta m;
			cap_begin();
			int rc = meta_load(&m, root, file, TRACE_REQUIRE_FINISHED);
			const char *msg = cap_end();
			runs++;
			if (rc == 0) {
				meta_free(&m);
			} else {
				refused++;
				if (rc != -1 || count_lines(msg) != 1 || !strstr(msg, file)) {
					bad++;
					printf("#   %s = %s: rc %d: %s", keys[k], values[v] ? values[v] : "(removed)", rc, msg);
				}
			}
			json_free(root);
		}
	}
	CHECK_INT(bad, 0, "%d mutated metadata: every refusal is one line naming the file", runs);
	CHECK(refused > runs * 3 / 4, "most mutations are refused (%d of %d)", refused, runs);
	json_free(orig);
}

int main(void)
{
	msg_set_prog("test");
	test_full();
	test_minimal();
	test_top();
	test_rejects();
	test_finished();
	test_lib();
	test_mutations();
	json_free(last);
	return t_done();
}
