/* A libovni program that declares mark 99 itself, the mark the shim takes
 * for blocking calls. With no argument it declares it first, then sleeps
 * inside it: the shim must leave that thread's mark 99 to the program.
 * "late": it sleeps first (the shim has declared 99 by then), then
 * declares it: the program's declaration must take its place, not abort.
 * "thread": main declares it, then a thread of its own sleeps: that thread
 * must not declare 99 for the shim (two titles for one type). */
#include <ovni.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static void declare(void)
{
	ovni_mark_type(99, OVNI_MARK_STACK, "Mine");
	ovni_mark_label(99, 1, "one");
}

static void *sleeper(void *arg)
{
	(void)arg;
	usleep(1000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "late") == 0)
		usleep(1000);
	declare();
	ovni_mark_push(99, 1);
	if (strcmp(mode, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, sleeper, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 2;
	} else {
		usleep(1000);
	}
	ovni_mark_pop(99, 1);
	return 0;
}
