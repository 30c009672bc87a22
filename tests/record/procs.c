/* Processes: fork (the child is a new process), exec (the thread's stream
 * goes on in the new image), nested exec, and the exit paths.
 *   procs fork            parent forks a child that exits normally
 *   procs exec N          re-execs itself N times, then returns
 *   procs _exit           leaves through _exit with status 5
 *   procs forkexec        the child of a fork execs /bin/true
 *   procs threads-exit    exit() while a thread is still running
 *   procs threads-_exit   _exit(4) while two threads wait in read(), which
 *                         the shim does not record (no event after their start)
 *   procs main-pthread-exit  the first thread leaves by pthread_exit, the
 *                         two others return 20 and 40 ms later (glibc then
 *                         ends the process, status 0)
 *   procs exec-with-thread  execs true while a second thread waits in read()
 *   procs vfork           a vfork child that calls _exit, then the parent
 *                         creates a thread and joins it
 *   procs exit-at-create  exit() right after pthread_create
 *   procs system          system("true"): the shell and true are recorded
 *   procs popen           popen("cat", "w"), three lines through it, pclose
 *   procs thread-exec     a second thread execs (the kernel gives it the pid)
 *   procs spawn-noenv     posix_spawn of true with an empty environment */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic int spinning;

static void *spin(void *a)
{
	spinning = 1;
	for (;;)
		usleep(1000);
	return a;
}

static int park_fd[2];

static void *park(void *a)
{
	char c;
	spinning = 1;
	while (read(park_fd[0], &c, 1) != 0)
		;
	return a;
}

static void *nap(void *a)
{
	usleep(20000 * (unsigned)(long)a);
	return a;
}

static void *exec_none(void *a)
{
	return a;
}

static void *exec_true(void *a)
{
	usleep(10000);
	execlp("true", "true", (char *)NULL);
	return a;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "fork";
	if (!strcmp(what, "fork")) {
		pid_t p = fork();
		if (p == 0)
			return 0;
		int st;
		waitpid(p, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(what, "exec")) {
		int n = argc > 2 ? atoi(argv[2]) : 0;
		if (n <= 0)
			return 0;
		char num[16];
		snprintf(num, sizeof(num), "%d", n - 1);
		execl("/proc/self/exe", argv[0], "exec", num, (char *)NULL);
		return 1;
	}
	if (!strcmp(what, "_exit"))
		_exit(5);
	if (!strcmp(what, "forkexec")) {
		pid_t p = fork();
		if (p == 0) {
			execlp("true", "true", (char *)NULL);
			_exit(1);
		}
		int st;
		waitpid(p, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(what, "threads-exit")) {
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
		while (!spinning) /* a sleep is not enough under load: it must run */
			usleep(1000);
		exit(0);
	}
	if (!strcmp(what, "threads-_exit")) {
		pthread_t t[2];
		if (pipe(park_fd) != 0)
			return 1;
		for (int i = 0; i < 2; i++) {
			spinning = 0;
			pthread_create(&t[i], NULL, park, NULL);
			while (!spinning)
				usleep(1000);
		}
		_exit(4);
	}
	if (!strcmp(what, "main-pthread-exit")) {
		pthread_t t;
		for (long i = 1; i <= 2; i++)
			pthread_create(&t, NULL, nap, (void *)i);
		pthread_exit(NULL);
	}
	if (!strcmp(what, "exec-with-thread")) {
		pthread_t t;
		if (pipe(park_fd) != 0)
			return 1;
		pthread_create(&t, NULL, park, NULL);
		while (!spinning)
			usleep(1000);
		execlp("true", "true", (char *)NULL);
		return 1;
	}
	if (!strcmp(what, "vfork")) {
		pid_t p = vfork();
		if (p == 0)
			_exit(0);
		int st;
		waitpid(p, &st, 0);
		pthread_t t;
		pthread_create(&t, NULL, exec_none, NULL);
		pthread_join(t, NULL);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(what, "exit-at-create")) {
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
		exit(0);
	}
	if (!strcmp(what, "thread-exec")) {
		pthread_t t;
		pthread_create(&t, NULL, exec_true, NULL);
		for (;;)
			pause();
	}
	if (!strcmp(what, "spawn-noenv")) {
		char *args[] = { "true", NULL }, *env[] = { NULL };
		pid_t p;
		if (posix_spawnp(&p, "true", NULL, NULL, args, env) != 0)
			return 1;
		int st;
		waitpid(p, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(what, "system"))
		return system("true");
	if (!strcmp(what, "popen")) {
		FILE *f = popen("cat", "w");
		if (!f)
			return 1;
		for (int i = 1; i <= 3; i++)
			fprintf(f, "line %d\n", i);
		int st = pclose(f);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	return 2;
}
