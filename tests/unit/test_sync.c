/* ovni sync: statistics, file formats, rendezvous file, rank detection,
 * and a whole run of four ranks (forked) with known clock skews. */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/clkoff.h"
#include "sync/sync.h"
#include "trace/system.h"
#include "t.h"

/* A sample whose true offset (rank 0 minus peer) is off, with one-way
 * latencies there and back. */
static struct sync_sample sample(int64_t base, int64_t off, int64_t there, int64_t back)
{
	struct sync_sample s;
	s.t1 = base;
	s.t2 = base + there - off;
	s.t3 = s.t2 + 100;
	s.t4 = s.t3 + off + back;
	return s;
}

static void test_sample(void)
{
	struct sync_sample s = sample(1000000, 5000, 700, 700);
	CHECK(sync_sample_delta(&s) == 5000.0, "symmetric exchange gives the offset");
	CHECK_INT(sync_sample_rtt(&s), 1400, "round trip leaves out the peer's hold time");
	s = sample(1000000, -5000, 1000, 600);
	CHECK(sync_sample_delta(&s) == -5200.0, "asymmetry shows as half the difference");
}

static void test_estimate(void)
{
	struct sync_sample s[100];
	/* 10 fast symmetric exchanges, 90 slow lopsided ones */
	for (int i = 0; i < 100; i++)
		s[i] = i % 10 == 3 ? sample(i * 100000, 123456, 500 + i, 500 + i) :
			sample(i * 100000, 123456, 900, 9000 + i);
	struct sync_offset o;
	sync_estimate(s, 100, &o);
	CHECK_INT(o.kept, 10, "keeps a tenth of 100 samples");
	CHECK_INT(o.median, 123456, "offset from the fastest exchanges only");
	CHECK(o.mean == 123456.0 && o.std == 0.0, "mean and std of the kept ones");
	CHECK_INT(o.rtt_max, 2 * (500 + 93), "largest kept round trip");

	struct sync_sample few[3] = { sample(0, 10, 5, 5), sample(1000, 30, 5, 5), sample(2000, 20, 5, 5) };
	sync_estimate(few, 3, &o);
	CHECK_INT(o.kept, 3, "fewer than 5 samples: all kept");
	CHECK_INT(o.median, 20, "median of 3");
	CHECK(fabs(o.std - 10.0) < 1e-9, "std with the n-1 divisor");

	struct sync_sample two[2] = { sample(0, 10, 5, 5), sample(1000, 20, 5, 5) };
	sync_estimate(two, 2, &o);
	CHECK_INT(o.median, 20, "even count: upper median");

	/* Deltas of -2.5 (odd one-way difference) truncate toward zero. */
	struct sync_sample half = sample(0, -2, 10, 9);
	sync_estimate(&half, 1, &o);
	CHECK(sync_sample_delta(&half) == -2.5, "half nanosecond delta");
	CHECK_INT(o.median, -2, "offset truncated toward zero");
	CHECK(o.std == 0.0, "one sample: std 0");
}

static void test_drift(void)
{
	struct sync_row rows[3] = { { .rank = 0, .host = "xeon01" }, { .rank = 1, .host = "xeon04" },
		{ .rank = 2, .host = "xeon04" } };
	char buf[1024];
	double wall[2] = { 1700000000.5, 1700000005.25 };
	int64_t offs[6] = { 0, 10, -20, 0, 11, -21 };
	size_t n = sync_format_drift(rows, 3, 2, wall, offs, buf, sizeof(buf));
	const char *drift =
		"wallclock            xeon01               xeon04               xeon04              \n"
		"1700000000.500000    0                    10                   -20                 \n"
		"1700000005.250000    0                    11                   -21                 \n";
	CHECK_STR(buf, drift, "drift table: wall clock, then every rank's offset");
	CHECK_INT(n, strlen(drift), "length returned");
	CHECK_INT(sync_format_drift(rows, 3, 2, wall, offs, NULL, 0), strlen(drift), "length without a buffer");
	char small[40];
	sync_format_drift(rows, 3, 2, wall, offs, small, sizeof(small));
	CHECK_INT(strlen(small), sizeof(small) - 1, "truncated, NUL-terminated");
}

static void test_rdv_text(void)
{
	struct sync_rdv r = { .host = "10.0.0.1", .port = "40123", .size = 8 }, p;
	for (int i = 0; i < SYNC_TOKEN_LEN; i++)
		r.token[i] = (unsigned char)(i * 37 + 1);
	char text[512];
	size_t n = sync_rdv_format(&r, text, sizeof(text));
	int line = 0;
	const char *why = sync_rdv_parse(text, n, &p, &line);
	CHECK(why == NULL, "rendezvous text parses back (%s)", why ? why : "ok");
	CHECK(strcmp(p.host, r.host) == 0 && strcmp(p.port, r.port) == 0 && p.size == 8 &&
		memcmp(p.token, r.token, SYNC_TOKEN_LEN) == 0, "same host, port, size and token");

	static const struct {
		const char *text;
		int line;
		const char *what;
	} bad[] = {
		{ "hello\n", 1, "other first line" },
		{ "ovni-sync 1\nhost a b\n", 2, "blank in a value" },
		{ "ovni-sync 1\nhost h\nport 70000\n", 3, "port out of range" },
		{ "ovni-sync 1\nhost h\nport 5x\n", 3, "port not a number" },
		{ "ovni-sync 1\nhost h\nport 5\nsize 0\n", 4, "size 0" },
		{ "ovni-sync 1\nhost h\nport 5\nsize 2\ntoken abc\n", 5, "short token" },
		{ "ovni-sync 1\nhost h\nport 5\nsize 2\n", 5, "no token" },
		{ "ovni-sync 1\nport 5\n", 2, "keys out of order" },
		{ "ovni-sync 1\nhost h", 2, "no final newline" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = sync_rdv_parse(bad[i].text, strlen(bad[i].text), &p, &line);
		CHECK(why && line == bad[i].line, "rendezvous file refused: %s (line %d: %s)", bad[i].what, line,
			why ? why : "accepted");
	}
	char tok[2 * SYNC_TOKEN_LEN + 1];
	memset(tok, 'A', 2 * SYNC_TOKEN_LEN);
	tok[2 * SYNC_TOKEN_LEN] = '\0';
	snprintf(text, sizeof(text), "ovni-sync 1\nhost h\nport 5\nsize 2\ntoken %s\n", tok);
	CHECK(sync_rdv_parse(text, strlen(text), &p, &line) != NULL, "upper-case hex refused");
	snprintf(text, sizeof(text), "ovni-sync 1\nhost h\nport 5\nsize 2\ntoken %064d\nmore\n", 0);
	CHECK(sync_rdv_parse(text, strlen(text), &p, &line) != NULL && line == 6, "line after the token refused");
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || strncmp(e->d_name, ".ovni", 5) == 0;
	if (d)
		closedir(d);
	return n;
}

static void test_rdv_file(const char *tmp)
{
	char dir[512], path[600], why[600];
	snprintf(dir, sizeof(dir), "%s/rdv/trace", tmp);
	snprintf(path, sizeof(path), "%s/" SYNC_RDV_NAME, dir);
	struct sync_rdv r = { .host = "node7", .port = "1234", .size = 3 }, p;
	r.token[5] = 0xab;
	CHECK_INT(sync_rdv_read(dir, &p, why, sizeof(why)), 0, "no rendezvous file yet: 0");
	CHECK_INT(sync_rdv_publish(dir, &r), 0, "rendezvous file published (trace directory and parent created)");
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "rendezvous file has mode 0600");
	CHECK_INT(count_entries(dir), 1, "no temporary file left behind");
	CHECK_INT(sync_rdv_read(dir, &p, why, sizeof(why)), 1, "rendezvous file read back");
	CHECK(p.size == 3 && p.token[5] == 0xab && strcmp(p.host, "node7") == 0, "with what was published");
	r.size = 4;
	CHECK_INT(sync_rdv_publish(dir, &r), 0, "published again over the old one");
	CHECK(sync_rdv_read(dir, &p, why, sizeof(why)) == 1 && p.size == 4, "the new one is read");
	FILE *f = fopen(path, "w");
	fputs("ovni-sync 1\nhost x\nport nope\n", f);
	fclose(f);
	CHECK_INT(sync_rdv_read(dir, &p, why, sizeof(why)), -1, "malformed rendezvous file: -1");
	CHECK(strstr(why, SYNC_RDV_NAME ": line 3: port") != NULL, "message names the file and line: %s", why);
	sync_rdv_remove(dir);
	CHECK(access(path, F_OK) != 0, "rendezvous file removed");
}

static const char *const *fake_env;

static const char *fake_get(const char *name)
{
	for (const char *const *e = fake_env; e && *e; e += 2)
		if (strcmp(e[0], name) == 0)
			return e[1];
	return NULL;
}

static int resolve(const char *const *env, int rank_opt, int size_opt, int *rank, int *size)
{
	fake_env = env;
	return sync_resolve_rank(fake_get, rank_opt, size_opt, rank, size);
}

static void test_resolve(void)
{
	int r, n;
	static const char *const slurm[] = { "SLURM_PROCID", "3", "SLURM_NTASKS", "8", NULL };
	CHECK(resolve(slurm, -1, -1, &r, &n) == 0 && r == 3 && n == 8, "Slurm variables");
	static const char *const pmi[] = { "PMI_RANK", "1", "PMI_SIZE", "2", NULL };
	CHECK(resolve(pmi, -1, -1, &r, &n) == 0 && r == 1 && n == 2, "PMI variables");
	static const char *const ompi[] = { "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "OMPI_COMM_WORLD_RANK", "5",
		"OMPI_COMM_WORLD_SIZE", "6", NULL };
	CHECK(resolve(ompi, -1, -1, &r, &n) == 0 && r == 5 && n == 6, "mpirun inside an allocation: Open MPI's variables win");
	static const char *const pmix[] = { "PMIX_RANK", "2", NULL };
	CHECK(resolve(pmix, -1, 4, &r, &n) == 0 && r == 2 && n == 4, "PMIx rank with --size");
	CHECK(resolve(pmix, -1, -1, &r, &n) == -1, "PMIx rank without a size: error");
	CHECK(resolve(slurm, 1, 2, &r, &n) == 0 && r == 1 && n == 2, "--rank and --size override the launcher");
	CHECK(resolve(NULL, 1, -1, &r, &n) == -1, "--rank without --size: error");
	CHECK(resolve(NULL, -1, -1, &r, &n) == -1, "no launcher and no --rank: error");
	CHECK(resolve(NULL, 2, 2, &r, &n) == -1, "rank not below size: error");
	static const char *const bad[] = { "SLURM_PROCID", "1x", "SLURM_NTASKS", "2", NULL };
	CHECK(resolve(bad, -1, -1, &r, &n) == -1, "malformed rank variable: error");
	static const char *const nosize[] = { "PMI_RANK", "0", NULL };
	CHECK(resolve(nosize, -1, -1, &r, &n) == -1, "rank variable without its size variable: error");
}

static void test_hostname(void)
{
	CHECK(sync_hostname_problem("node01") == NULL, "plain hostname accepted");
	CHECK(sync_hostname_problem("") != NULL, "empty hostname refused");
	CHECK(sync_hostname_problem("a.b") != NULL, "hostname with a dot refused");
	CHECK(sync_hostname_problem("a b") != NULL, "hostname with a blank refused");
	char longname[80];
	memset(longname, 'x', 65);
	longname[65] = '\0';
	CHECK(sync_hostname_problem(longname) != NULL, "hostname over 64 bytes refused");
	char h[SYNC_HOST_MAX + 1];
	CHECK(sync_default_hostname(h, sizeof(h)) == 0 && !strchr(h, '.') && h[0], "default hostname: %s", h);
}

static void test_write_file(const char *tmp)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/deep/er/offsets.txt", tmp);
	CHECK_INT(sync_write_file(path, "abc\n", 4), 0, "file written, parent directories created");
	char buf[16] = "";
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	CHECK_STR(buf, "abc\n", "with the text");
	CHECK(sync_write_file("/proc/nonexistent/x/offsets.txt", "a", 1) == -1, "unwritable place: -1");
}

/* Ranks 1..3 forked, rank 0 here; skews in ns per rank. */
static void test_run(const char *tmp)
{
	static const int64_t skew[4] = { 250000, 7000000000LL, -3000000000LL, 42 };
	char dir[512], out[600];
	snprintf(dir, sizeof(dir), "%s/run", tmp);
	snprintf(out, sizeof(out), "%s/run/clock-offsets.txt", tmp);
	struct sync_opts o = { .size = 4, .samples = 200, .rounds = 1, .timeout_s = 20, .dir = dir,
		.output = out, .bind = "127.0.0.1" };
	pid_t kids[4];
	for (int r = 1; r < 4; r++) {
		if ((kids[r] = fork()) == 0) {
			o.rank = r;
			o.skew_ns = skew[r];
			snprintf(o.hostname, sizeof(o.hostname), "node%d", r);
			_exit(sync_run(&o) == 0 ? 0 : 1);
		}
	}
	o.rank = 0;
	o.skew_ns = skew[0];
	snprintf(o.hostname, sizeof(o.hostname), "node0");
	CHECK_INT(sync_run(&o), 0, "rank 0 of 4 finishes");
	for (int r = 1; r < 4; r++) {
		int st = 0;
		waitpid(kids[r], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d finishes", r);
	}
	FILE *f = fopen(out, "r");
	CHECK(f != NULL, "offsets file written");
	if (!f)
		return;
	char line[256];
	CHECK(fgets(line, sizeof(line), f) && strncmp(line, "rank       hostname", 19) == 0, "header line");
	for (int r = 0; r < 4; r++) {
		int rank = -1;
		char host[80];
		int64_t med = 0;
		double mean = 0, std = 0;
		int ok = fgets(line, sizeof(line), f) &&
			sscanf(line, "%d %79s %" SCNd64 " %lf %lf", &rank, host, &med, &mean, &std) == 5;
		int64_t want = skew[0] - skew[r];
		CHECK(ok && rank == r && llabs((long long)(med - want)) <= 5000,
			"rank %d: offset %" PRId64 " vs injected %" PRId64 " (error %lld ns, std %.0f ns)", r, med, want,
			(long long)(med - want), std);
	}
	fclose(f);
	CHECK(access(dir, F_OK) == 0 && count_entries(dir) == 1, "only the offsets file is left in the directory");

	/* The emulator's reader takes the file: looms on node0..node3 get the
	 * offsets, a loom on another host gets 0. */
	static const char *const hosts[5] = { "node0", "node1", "node2", "node3", "elsewhere" };
	struct sys_loom looms[5], *lp[5];
	struct system sys = { .looms = lp, .nlooms = 5 };
	for (int i = 0; i < 5; i++) {
		looms[i] = (struct sys_loom){ .name = hosts[i], .hostname = (char *)hosts[i], .clock_offset = 99 };
		lp[i] = &looms[i];
	}
	CHECK_INT(clkoff_apply(&sys, out, 1), 0, "clkoff (the emulator's reader) accepts the file");
	for (int r = 0; r < 4; r++) {
		long long err = (long long)(looms[r].clock_offset - (skew[0] - skew[r]));
		CHECK(llabs(err) <= 5000, "loom on node%d gets its offset (%" PRId64 ", error %lld ns)", r,
			looms[r].clock_offset, err);
	}
	CHECK_INT(looms[4].clock_offset, 0, "a loom on a host not in the file gets 0");
}

int main(void)
{
	char tmp[] = "/tmp/ovni-test-sync.XXXXXX";
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_sample();
	test_estimate();
	test_drift();
	test_rdv_text();
	test_rdv_file(tmp);
	test_resolve();
	test_hostname();
	test_write_file(tmp);
	test_run(tmp);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		return 1;
	return t_done();
}
