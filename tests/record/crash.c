/* Dies in the way argv[1] says, with a worker thread running and events
 * already emitted by both: segv, bus, fpe, ill, abort, term, int, hup, kill. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int ready;

static void *spin(void *a)
{
	ready = 1;
	for (;;)
		usleep(1000);
	return a;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";
	pthread_t t;
	pthread_create(&t, NULL, spin, NULL);
	while (!ready)
		usleep(100);
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "bus", SIGBUS }, { "ill", SIGILL }, { "term", SIGTERM }, { "int", SIGINT },
		     { "hup", SIGHUP }, { "kill", SIGKILL } };
	if (!strcmp(how, "segv"))
		*(volatile int *)(long)argc = 1; /* a real fault: address 2 */
	if (!strcmp(how, "fpe")) {
		volatile int zero = 0;
		printf("%d\n", argc / zero);
	}
	if (!strcmp(how, "abort"))
		abort();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcmp(how, sigs[i].name))
			kill(getpid(), sigs[i].sig);
	sleep(5);
	return 0;
}
