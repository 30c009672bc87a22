/* Integer formatting and buffered output. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/out.h"
#include "t.h"

static void check_u64(uint64_t v)
{
	char want[32], got[32];
	snprintf(want, sizeof(want), "%" PRIu64, v);
	got[fmt_u64(got, v)] = '\0';
	CHECK_STR(got, want, "fmt_u64(%s)", want);
}

static void check_i64(int64_t v)
{
	char want[32], got[32];
	snprintf(want, sizeof(want), "%" PRId64, v);
	got[fmt_i64(got, v)] = '\0';
	CHECK_STR(got, want, "fmt_i64(%s)", want);
}

/* Output through a small buffer must keep every byte in order, written
 * in this thread or by a writer thread (writer). */
static void check_out(int writer)
{
	const char *how = writer ? "writer thread" : "this thread";
	char path[] = "/tmp/ovni-test-out.XXXXXX";
	int fd = mkstemp(path);
	struct out o;
	out_init(&o, fd, path, 64);
	if (writer)
		CHECK(out_start_writer(&o) == 0 && o.writer, "%s: a regular file gets a writer", how);
	for (int i = 0; i < 1000; i++) {
		out_u64(&o, (uint64_t)i);
		out_char(&o, '\n');
	}
	char big[200];
	memset(big, 'x', sizeof(big));
	out_mem(&o, big, sizeof(big));
	char *d = out_reserve(&o, 100); /* more than the buffer: it grows */
	memset(d, 'y', 100);
	out_commit(&o, 100);
	out_printf(&o, "end %d\n", 7);
	CHECK(out_flush(&o) == 0, "%s: out_flush succeeds", how);
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && (uint64_t)st.st_size == o.written,
	      "%s: after a flush, all that was counted as written is in the file", how);
	CHECK(out_close(&o) == 0, "%s: out_close succeeds", how);
	FILE *f = fopen(path, "r");
	int good = 1;
	for (int i = 0; i < 1000; i++) {
		int v;
		if (fscanf(f, "%d\n", &v) != 1 || v != i)
			good = 0;
	}
	char tail[512] = "";
	size_t n = fread(tail, 1, sizeof(tail) - 1, f);
	tail[n] = '\0';
	fclose(f);
	unlink(path);
	CHECK(good, "%s: buffered numbers come out in order", how);
	CHECK(n == 306 && tail[0] == 'x' && tail[199] == 'x' && tail[200] == 'y' && tail[299] == 'y' &&
		      strcmp(tail + 300, "end 7\n") == 0,
	      "%s: a large write, a large reserve and printf follow the buffered bytes", how);
}

/* A write that fails (a file size limit) is reported by the flush after it,
 * naming the error, however many buffers the writer thread had. */
static void check_out_error(int writer)
{
	const char *how = writer ? "writer thread" : "this thread";
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { 4096, 4096 };
		setrlimit(RLIMIT_FSIZE, &rl);
		char path[] = "/tmp/ovni-test-out.XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		struct out o;
		out_init(&o, fd, "limited", 256);
		if (writer)
			out_start_writer(&o);
		for (int i = 0; i < 100000 && !o.err; i++)
			out_u64(&o, (uint64_t)i);
		int flushed = out_close(&o);
		_exit(flushed == -1 && o.err == EFBIG && o.written <= 4096 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: a write past the file size limit fails with EFBIG, nothing past the limit counted", how);
}

int main(void)
{
	uint64_t u[] = { 0, 1, 9, 10, 99, 100, 101, 999, 1000, 123456789, UINT64_MAX, UINT64_MAX / 10 };
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		check_u64(u[i]);
	int64_t s[] = { 0, -1, 1, -10, INT64_MIN, INT64_MAX, -1234567890123LL };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		check_i64(s[i]);

	char buf[32];
	static const int d4[] = { 0, 7, 42, 100, 1234, 9999 };
	for (size_t i = 0; i < sizeof(d4) / sizeof(d4[0]); i++) {
		char want[8];
		snprintf(want, sizeof(want), "%04d", d4[i]);
		memcpy(buf, fmt_digits4 + 4 * d4[i], 4);
		buf[4] = '\0';
		CHECK_STR(buf, want, "fmt_digits4[%d]", d4[i]);
	}
	buf[fmt_u64_pad(buf, 42, 10, ' ')] = '\0';
	CHECK_STR(buf, "        42", "right-aligned in 10");
	buf[fmt_u64_pad(buf, 12345678901ULL, 10, ' ')] = '\0';
	CHECK_STR(buf, "12345678901", "wider than the field is not cut");
	buf[fmt_i64_pad(buf, 7, 20, '0')] = '\0';
	CHECK_STR(buf, "00000000000000000007", "zero padded to 20");

	static const char *const words[][2] = {
		{ "/tmp/trace", "/tmp/trace" },
		{ "/tmp/my trace", "'/tmp/my trace'" },
		{ "it's", "'it'\\''s'" },
		{ "", "''" },
		{ "a\nb", "'a?b'" },
		{ "$HOME", "'$HOME'" },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		char *w = fmt_shell_word(words[i][0]);
		CHECK_STR(w ? w : "(null)", words[i][1], "fmt_shell_word(\"%s\")", words[i][0]);
		free(w);
	}

	check_out(0);
	check_out(1);
	check_out_error(0);
	check_out_error(1);
	int nul = open("/dev/null", O_WRONLY);
	struct out o;
	out_init(&o, nul, "/dev/null", 64);
	CHECK(out_start_writer(&o) == 0 && !o.writer, "a device gets no writer thread");
	out_close(&o);
	close(nul);
	return t_done();
}
