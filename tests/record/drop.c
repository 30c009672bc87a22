/* A root program that drops its privileges to nobody (65534) the usual
 * way (groups, gid, then uid), then forks: the child prints and exits 3,
 * the parent prints how it ended. The recorder cannot write the trace as
 * nobody; the program must run as it would without it all the same. */
#define _GNU_SOURCE /* setgroups */
#include <grp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
		perror("drop");
		return 2;
	}
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		printf("child\n");
		fflush(stdout);
		_exit(3);
	}
	int st = 0;
	waitpid(p, &st, 0);
	printf("parent: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
