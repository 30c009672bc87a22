/* A root program that drops its privileges to nobody (65534) the usual
 * way (groups, gid, then uid), then forks: the child prints and exits 3,
 * the parent prints how it ended, then waits 20000 times on a condition
 * until a time long past (blocking calls that return at once, written as
 * events: its stream needs new windows). The recorder cannot write the
 * trace as nobody; the program must run as it would without it all the
 * same. */
#define _GNU_SOURCE /* setgroups */
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
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
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec past = { 0, 0 };
	pthread_mutex_lock(&m);
	for (int i = 0; i < 20000; i++)
		pthread_cond_timedwait(&c, &m, &past);
	pthread_mutex_unlock(&m);
	printf("parent: done\n");
	return 0;
}
