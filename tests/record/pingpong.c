/* Two threads take turns (a spin on a shared flag) and each emits an event
 * in its turn: in clock order the events of the whole trace must alternate,
 * whatever clock the shim reads (the TSC scaled per thread, or not). */
#include <ovni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic int turn;
static int rounds;

static void emit(const char *mcv)
{
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, mcv);
	ovni_ev_set_clock(&ev, ovni_clock_now());
	ovni_ev_emit(&ev);
}

static void *other(void *a)
{
	for (int i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != 1)
			;
		emit("OB.");
		atomic_store(&turn, 0);
	}
	return a;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 100000;
	pthread_t t;
	pthread_create(&t, NULL, other, NULL);
	for (int i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != 0)
			;
		emit("OU[");
		atomic_store(&turn, 1);
	}
	pthread_join(t, NULL);
	return 0;
}
