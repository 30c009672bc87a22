/* Prints what the program sees of signals: the disposition of every signal
 * (DFL, IGN or a handler, with its flags) and the blocked mask, so a run
 * under `ovni record` can be compared with a plain run. With an argument
 * "own", installs a SIGSEGV handler first and prints what it replaced, then
 * faults: the handler must run and exit 42. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig)
{
	(void)sig;
	static const char msg[] = "own handler ran\n";
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(42);
}

int main(int argc, char **argv)
{
	sigset_t mask;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	for (int s = 1; s < NSIG; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) != 0)
			continue;
		const char *d = sa.sa_handler == SIG_DFL ? "DFL" : sa.sa_handler == SIG_IGN ? "IGN" : "handler";
		printf("%d %s flags=%#x blocked=%d\n", s, d, (unsigned)sa.sa_flags, sigismember(&mask, s));
	}
	if (argc > 1 && strcmp(argv[1], "own") == 0) {
		struct sigaction sa, old;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, &old);
		printf("replaced %s\n", old.sa_handler == SIG_DFL ? "DFL" : "something else");
		fflush(stdout);
		*(volatile int *)(long)argc = 1; /* a real fault: address 2 */
	}
	return 0;
}
