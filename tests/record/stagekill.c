/* T threads each emit N events through the API (OB.); once all have, the
 * program creates the file READY, then dies by SIGKILL ("kill") or waits
 * to be killed ("wait"). For the tests of what a recording keeps of the
 * events its staging files held when it died.
 * Usage: stagekill T N kill|wait READY */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ovni.h"

static long nev;
static pthread_barrier_t bar;

static void *run(void *arg)
{
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, "OB.");
	for (long i = 0; i < nev; i++) {
		ovni_ev_set_clock(&ev, ovni_clock_now());
		ovni_ev_emit(&ev);
	}
	pthread_barrier_wait(&bar);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	int nth = atoi(argv[1]);
	nev = atol(argv[2]);
	pthread_barrier_init(&bar, NULL, (unsigned)nth + 1);
	for (int i = 0; i < nth; i++) {
		pthread_t t;
		pthread_create(&t, NULL, run, NULL);
	}
	pthread_barrier_wait(&bar);
	close(open(argv[4], O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
	if (strcmp(argv[3], "kill") == 0)
		raise(SIGKILL);
	for (;;)
		pause();
}
