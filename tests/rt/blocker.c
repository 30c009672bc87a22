/* A program whose threads leave their CPU on purpose, for recording with
 * `ovni record --kernel`: "sleeper" sleeps 3 x 20 ms, "piper" waits 30 ms
 * for a byte on a pipe, "locker" waits 30 ms for a mutex. Prints
 * "ROLE TID" for each, so a test can find their rows. With "kill": main
 * sleeps 20 ms, starts a sleeper and dies by SIGKILL 10 ms into its sleep. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000L

static int pipefd[2];
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ready; /* threads about to wait */

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void say(const char *role)
{
	printf("%s %ld\n", role, (long)syscall(SYS_gettid));
	fflush(stdout);
}

static void *sleeper(void *arg)
{
	(void)arg;
	say("sleeper");
	atomic_fetch_add(&ready, 1);
	for (int i = 0; i < 3; i++)
		sleep_ms(20);
	return NULL;
}

static void *piper(void *arg)
{
	(void)arg;
	char c;
	say("piper");
	atomic_fetch_add(&ready, 1);
	if (read(pipefd[0], &c, 1) != 1)
		perror("read");
	return NULL;
}

static void *locker(void *arg)
{
	(void)arg;
	say("locker");
	atomic_fetch_add(&ready, 1);
	pthread_mutex_lock(&mutex);
	pthread_mutex_unlock(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	if (argc > 1 && strcmp(argv[1], "kill") == 0) {
		sleep_ms(20);
		pthread_create(&t[0], NULL, sleeper, NULL);
		while (atomic_load(&ready) < 1) /* its stream is made: killed mid-sleep */
			sleep_ms(1);
		sleep_ms(10);
		raise(SIGKILL);
	}
	if (pipe(pipefd) != 0)
		return 1;
	pthread_mutex_lock(&mutex);
	pthread_create(&t[0], NULL, sleeper, NULL);
	pthread_create(&t[1], NULL, piper, NULL);
	pthread_create(&t[2], NULL, locker, NULL);
	while (atomic_load(&ready) < 3)
		sleep_ms(1);
	sleep_ms(30);
	pthread_mutex_unlock(&mutex);
	if (write(pipefd[1], "x", 1) != 1)
		perror("write");
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
