/* The Paraver writers: .prv lines and header, duplicate and value rules,
 * .pcf and .row byte for byte against a reference output, .cfg views. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chan/bay.h"
#include "chan/chan.h"
#include "base/fail.h"
#include "paraver/cfg.h"
#include "paraver/pcf.h"
#include "paraver/prv.h"
#include "paraver/pvt.h"
#include "paraver/row.h"
#include "t.h"

/* Unit tests run from the top of the checkout. */
#define GOLDEN "tests/golden"

static char tmpdir[] = "/tmp/ovni-test-paraver.XXXXXX";

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	size_t r = fread(b, 1, (size_t)n, f);
	b[r] = '\0';
	fclose(f);
	if (len)
		*len = r;
	return b;
}

static void test_prv(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/t.prv", tmpdir);
	struct prv p;
	struct bay bay;
	struct chan a, b, n, z, s;
	bay_init(&bay);
	CHECK_INT(prv_open(&p, path, 3), 0, "prv_open");
	chan_init(&a, CHAN_SINGLE, "a");
	chan_init(&b, CHAN_SINGLE, "b");
	chan_init(&n, CHAN_SINGLE, "n");
	chan_init(&z, CHAN_SINGLE, "z");
	chan_init(&s, CHAN_SINGLE, "s");
	struct chan *all[] = { &a, &b, &n, &z, &s };
	for (int i = 0; i < 5; i++) {
		chan_set_flags(all[i], CHAN_ALLOW_DUP);
		bay_add(&bay, all[i]);
	}
	prv_register(&p, 0, 6, &a, PRV_NEXT);
	prv_register(&p, 1, 4, &b, PRV_SKIPDUP);
	prv_register(&p, 2, 3, &n, PRV_ZERO | PRV_EMITDUP);
	prv_register(&p, 2, 100, &z, PRV_SKIPDUPNULL);
	prv_register(&p, 0, 7, &s, 0);
	fail_clear();
	CHECK_INT(prv_register(&p, 3, 1, &a, 0), -1, "row out of range refused");

	prv_advance(&p, 0);
	chan_set(&b, value_null());
	chan_set(&a, value_int64(0));
	chan_set(&s, value_null());
	CHECK_INT(bay_propagate(&bay), 0, "step at 0");
	prv_advance(&p, 1234567890123LL);
	chan_set(&b, value_null()); /* dup: skipped */
	chan_set(&n, value_int64(0)); /* zero allowed */
	chan_set(&z, value_int64(5));
	CHECK_INT(bay_propagate(&bay), 0, "step 2");
	prv_advance(&p, 1234567890124LL);
	chan_set(&n, value_int64(0)); /* EMITDUP */
	chan_set(&z, value_int64(5)); /* SKIPDUPNULL writes a repeated number */
	chan_set(&b, value_int64(2));
	chan_set(&a, value_null());
	CHECK_INT(bay_propagate(&bay), 0, "step 3");
	prv_advance(&p, 1234567890125LL);
	chan_set(&z, value_null());
	CHECK_INT(bay_propagate(&bay), 0, "step 4");
	chan_set(&z, value_null()); /* repeated null: skipped */
	CHECK_INT(bay_propagate(&bay), 0, "step 5");

	fail_clear();
	chan_set(&s, value_null());
	CHECK_INT(bay_propagate(&bay), -1, "a repeated value without a dup flag is an error");
	CHECK(strstr(fail_reason(), "repeated") != NULL, "reason: %s", fail_reason());
	fail_clear();
	chan_set(&b, value_int64(0));
	CHECK_INT(bay_propagate(&bay), -1, "value 0 without PRV_ZERO is an error");
	CHECK_INT(prv_close(&p, 1234567890125LL), 0, "prv_close");

	char *got = slurp(path, NULL);
	const char *want =
		"#Paraver (19/01/38 at 03:14):00000001234567890125_ns:0:1:1(3:1)\n"
		"2:0:1:1:2:0:4:0\n"
		"2:0:1:1:1:0:6:1\n"
		"2:0:1:1:1:0:7:0\n"
		"2:0:1:1:3:1234567890123:3:0\n"
		"2:0:1:1:3:1234567890123:100:5\n"
		"2:0:1:1:3:1234567890124:3:0\n"
		"2:0:1:1:3:1234567890124:100:5\n"
		"2:0:1:1:2:1234567890124:4:2\n"
		"2:0:1:1:1:1234567890124:6:0\n"
		"2:0:1:1:3:1234567890125:100:0\n";
	CHECK_STR(got ? got : "", want, "prv content, header rewritten with the duration");
	free(got);
	for (int i = 0; i < 5; i++)
		chan_free(all[i]);
	bay_free(&bay);

	char h[128];
	prv_header(h, 20, 64983241);
	CHECK_STR(h, "#Paraver (19/01/38 at 03:14):00000000000064983241_ns:0:1:1(20:1)\n",
		  "header as the reference writes it");
}

/* Times and values through the cached digits: the last four digits of the
 * time change alone, a carry past them, going back to a small time (a second
 * trace in the same process), values alternating between long ones. */
static void test_prv_digits(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/d.prv", tmpdir);
	struct prv p;
	struct bay bay;
	struct chan a, b;
	bay_init(&bay);
	CHECK_INT(prv_open(&p, path, 2), 0, "prv_open");
	chan_init(&a, CHAN_SINGLE, "a");
	chan_init(&b, CHAN_SINGLE, "b");
	bay_add(&bay, &a);
	bay_add(&bay, &b);
	prv_register(&p, 0, 1, &a, PRV_ZERO);
	prv_register(&p, 1, 22, &b, PRV_NEXT);
	static const int64_t times[] = { 7, 9999, 10000, 10001, 19999, 20000, 123456789999,
					 123456790000, 123456790050, 5, 99999999, 100000000 };
	static const int64_t values[] = { 12345, 0, 987654321, 12345, 7, 10, 9, 10, 0, -3, 12345, 12346 };
	char want[2048] = "#Paraver (19/01/38 at 03:14):00000000000100000000_ns:0:1:1(2:1)\n";
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		prv_advance(&p, times[i]);
		chan_set(&a, value_int64(values[i]));
		chan_set(&b, value_int64(values[i] * 1000 + 1));
		CHECK_INT(bay_propagate(&bay), 0, "step %zu", i);
		size_t n = strlen(want);
		snprintf(want + n, sizeof(want) - n, "2:0:1:1:1:%lld:1:%lld\n2:0:1:1:2:%lld:22:%lld\n",
			 (long long)times[i], (long long)values[i], (long long)times[i],
			 (long long)(values[i] * 1000 + 2));
	}
	CHECK_INT(prv_close(&p, 100000000), 0, "prv_close");
	char *got = slurp(path, NULL);
	CHECK_STR(got ? got : "", want, "times and values written through the caches");
	free(got);
	chan_free(&a);
	chan_free(&b);
	bay_free(&bay);
}

/* Builds the thread.pcf and thread.row of the golden case ovni/mp-simple. */
static void test_pcf_row(void)
{
	struct pcf p;
	pcf_init(&p);
	static const char *const cpus[] = {
		" CPU 0.0", " CPU 0.1", " CPU 0.2", " CPU 0.3", "vCPU 0.*",
		" CPU 1.0", " CPU 1.1", " CPU 1.2", " CPU 1.3", "vCPU 1.*",
		" CPU 2.0", " CPU 2.1", " CPU 2.2", " CPU 2.3", "vCPU 2.*",
		" CPU 3.0", " CPU 3.1", " CPU 3.2", " CPU 3.3", "vCPU 3.*",
	};
	struct pcf_type *t = pcf_add_type(&p, 6, "Thread: CPU affinity");
	for (int i = 0; i < 20; i++)
		pcf_add_value(t, i + 1, cpus[i]);
	pcf_add_type(&p, 2, "Thread: TID of the ACTIVE thread");
	t = pcf_add_type(&p, 4, "Thread: thread state");
	static const char *const st[] = { "Unknown", "Running", "Paused", "Dead", "Cooling", "Warming" };
	for (int i = 0; i < 6; i++)
		pcf_add_value(t, i, st[i]);
	t = pcf_add_type(&p, 7, "Flushing ovni buffer ");
	pcf_add_value(t, 1, "Flushing");
	CHECK_INT(pcf_add_value(t, 1, "Flushing"), 0, "adding the same label again is fine");
	fail_clear();
	CHECK_INT(pcf_add_value(t, 1, "Other"), -1, "relabelling a value is an error");
	fail_clear();
	CHECK(pcf_add_type(&p, 4, "again") == NULL, "a type cannot be added twice");

	char path[256], want[512];
	snprintf(path, sizeof(path), "%s/thread.pcf", tmpdir);
	CHECK_INT(pcf_write(&p, path), 0, "pcf_write");
	snprintf(want, sizeof(want), "%s/ovni/mp-simple/expected/0-emu/thread.pcf", GOLDEN);
	char *g = slurp(path, NULL), *w = slurp(want, NULL);
	CHECK(g && w && strcmp(g, w) == 0, "thread.pcf identical to the reference's");
	free(g);
	free(w);
	pcf_free(&p);

	static const char *const th[] = { "TH 1.20561", "TH 1.20562", "TH 1.20565", "TH 1.20566" };
	snprintf(path, sizeof(path), "%s/thread.row", tmpdir);
	CHECK_INT(row_write(path, th, 4), 0, "row_write");
	snprintf(want, sizeof(want), "%s/ovni/mp-simple/expected/0-emu/thread.row", GOLDEN);
	g = slurp(path, NULL);
	w = slurp(want, NULL);
	CHECK(g && w && strcmp(g, w) == 0, "thread.row identical to the reference's");
	free(g);
	free(w);
	snprintf(path, sizeof(path), "%s/cpu.row", tmpdir);
	CHECK_INT(row_write(path, cpus, 20), 0, "row_write cpu");
	snprintf(want, sizeof(want), "%s/ovni/mp-simple/expected/0-emu/cpu.row", GOLDEN);
	g = slurp(path, NULL);
	w = slurp(want, NULL);
	CHECK(g && w && strcmp(g, w) == 0, "cpu.row identical to the reference's");
	free(g);
	free(w);
	const char *holes[] = { "a", NULL };
	CHECK_INT(row_write(path, holes, 2), -1, "a row without label is refused");
}

static void test_pvt_cfg(void)
{
	struct pvt t;
	CHECK_INT(pvt_open(&t, tmpdir, "cpu", 2), 0, "pvt_open");
	pvt_set_row(&t, 0, " CPU 0.0");
	pvt_set_row(&t, 1, "vCPU 0.*");
	struct cfg_view *v = pvt_add_view(&t, "cpu/ovni/pid", "CPU: PID of the RUNNING thread",
					  "CPU: PID of the RUNNING thread", 1, CFG_NULL_GRADIENT);
	CHECK(v != NULL, "view added");
	v = pvt_add_view(&t, "thread/ovni/thread-state", "Thread: thread state",
			 "Thread: thread state", 4, CFG_CUSTOM);
	unsigned char red[3] = { 255, 0, 0 };
	cfg_view_add_color(v, 1, red);
	cfg_view_add_color(v, 2, red);
	CHECK_INT(pvt_close(&t, 5), 0, "pvt_close");
	char path[512];
	snprintf(path, sizeof(path), "%s/cpu.row", tmpdir);
	CHECK(access(path, F_OK) == 0, "cpu.row written");
	snprintf(path, sizeof(path), "%s/cfg", tmpdir);
	CHECK_INT(pvt_write_views(&t, path), 0, "views written");
	snprintf(path, sizeof(path), "%s/cfg/cpu/ovni/pid.cfg", tmpdir);
	char *c = slurp(path, NULL);
	CHECK(c && strncmp(c, "#ParaverCFG\nConfigFile.Version: 3.4\nConfigFile.NumWindows: 1\n", 60) == 0,
	      "a view starts with the cfg 3.4 header");
	CHECK(c && strstr(c, "\nwindow_filter_module evt_type 1 1\n"), "the view filters its type");
	CHECK(c && strstr(c, "window_filter_module evt_type_label 1 \"CPU: PID of the RUNNING thread\"\n"),
	      "and labels it as the pcf does");
	CHECK(c && strstr(c, "null_gradient"), "identifiers use the null gradient");
	free(c);
	snprintf(path, sizeof(path), "%s/cfg/thread/ovni/thread-state.cfg", tmpdir);
	c = slurp(path, NULL);
	CHECK(c && strstr(c, "window_custom_color_palette {1.000000000000:255,0,0},{2.000000000000:255,0,0}\n"),
	      "custom palette listed per value");
	free(c);
	pvt_free(&t);

	CHECK_INT(pvt_open(&t, tmpdir, "gone", 1), 0, "pvt_open");
	pvt_discard(&t);
	snprintf(path, sizeof(path), "%s/gone.prv", tmpdir);
	CHECK(access(path, F_OK) != 0, "a discarded trace leaves no file");
	pvt_free(&t);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_prv();
	test_prv_digits();
	test_pcf_row();
	test_pvt_cfg();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return t_done();
}
