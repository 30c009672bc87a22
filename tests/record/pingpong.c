/* Two threads take turns (a spin on a shared flag) and each emits an event
 * in its turn: in clock order the events of the whole trace must alternate,
 * whatever clock the shim reads (the TSC scaled per thread, or not).
 * pingpong N [exec FILE]: with exec, the other side is a second program
 * (this one, exec'd: its clock starts anew, from the rate the recording
 * shares) taking turns through FILE, mapped by both. */
#include <fcntl.h>
#include <ovni.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic int local_turn, *turn = &local_turn;
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
		while (atomic_load(turn) != 1)
			;
		emit("OB.");
		atomic_store(turn, 0);
	}
	return a;
}

static void play_main(void)
{
	for (int i = 0; i < rounds; i++) {
		while (atomic_load(turn) != 0)
			;
		emit("OU[");
		atomic_store(turn, 1);
	}
}

static _Atomic int *map_turn(const char *path, int create)
{
	int fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0600);
	if (fd < 0 || (create && ftruncate(fd, 4096) != 0)) {
		perror(path);
		exit(1);
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 100000;
	if (argc > 3 && strcmp(argv[2], "child") == 0) {
		turn = map_turn(argv[3], 0);
		other(NULL);
		return 0;
	}
	if (argc > 3 && strcmp(argv[2], "exec") == 0) {
		turn = map_turn(argv[3], 1);
		pid_t p = fork();
		if (p == 0) {
			execl("/proc/self/exe", argv[0], argv[1], "child", argv[3], (char *)NULL);
			_exit(127);
		}
		play_main();
		int st;
		waitpid(p, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	pthread_t t;
	pthread_create(&t, NULL, other, NULL);
	play_main();
	pthread_join(t, NULL);
	return 0;
}
