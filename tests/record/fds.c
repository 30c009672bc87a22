/* A program that does to its descriptors what daemons and shells do: it
 * closes every one above stderr (argv[1] "loop": close() on each up to the
 * limit, "range": the close_range system call), then opens a file of its
 * own (argv[2]), which takes the lowest free number, and writes to it
 * while its threads come and go (enough events for the main thread's
 * stream to need new windows). With argv[3] (the trace directory) it
 * first removes its own stream.obs, as a user deleting the trace would.
 * Exits with status 3. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *work(void *a)
{
	return a;
}

static void close_all(const char *how)
{
	if (strcmp(how, "range") == 0) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
			return;
	}
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
	for (long fd = 3; fd < max; fd++)
		close((int)fd);
}

static void remove_own_stream(const char *trace)
{
	char pat[4096];
	snprintf(pat, sizeof(pat), "%s/loom.*/proc.%d/thread.%d/stream.obs", trace, (int)getpid(), (int)getpid());
	glob_t g;
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc != 1 || unlink(g.gl_pathv[0]) != 0) {
		fprintf(stderr, "fds: cannot remove my stream (%s)\n", pat);
		exit(1);
	}
	globfree(&g);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: fds loop|range FILE [TRACEDIR]\n");
		return 2;
	}
	close_all(argv[1]);
	if (argc > 3)
		remove_own_stream(argv[3]);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	for (int i = 0; i < 2500; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, work, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (i % 500 == 0 && write(fd, "kept\n", 5) != 5)
			return 1;
	}
	close(fd);
	printf("fds: fd %d\n", fd);
	return 3;
}
