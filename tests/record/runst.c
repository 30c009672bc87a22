/* runst [-c] PROG [ARGS...]: runs PROG and prints how it ended, as its
 * parent sees it: "exit N" or "signal N". -c: PROG's standard error is a
 * pipe whose reading end is already closed. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int closed = argc > 1 && strcmp(argv[1], "-c") == 0;
	if (argc < 2 + closed) {
		fprintf(stderr, "usage: runst [-c] PROG [ARGS...]\n");
		return 2;
	}
	int fd[2];
	if (closed && (pipe(fd) != 0 || close(fd[0]) != 0)) {
		perror("runst: pipe");
		return 2;
	}
	pid_t p = fork();
	if (p < 0) {
		perror("runst: fork");
		return 2;
	}
	if (p == 0) {
		if (closed)
			dup2(fd[1], 2);
		execvp(argv[1 + closed], argv + 1 + closed);
		_exit(127);
	}
	if (closed)
		close(fd[1]);
	int st;
	if (waitpid(p, &st, 0) != p) {
		perror("runst: waitpid");
		return 2;
	}
	if (WIFSIGNALED(st))
		printf("signal %d\n", WTERMSIG(st));
	else
		printf("exit %d\n", WEXITSTATUS(st));
	return 0;
}
