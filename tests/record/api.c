/* Uses the libovni API as an instrumented runtime does: process and thread
 * setup, CPUs, marks with labels, attributes, plain and jumbo events. Built
 * against `ovni lib` output; run alone or under ovni record.
 *   api N                 N marks, then the thread and the process end
 *   api N pthread-exit    the same, but the first thread then leaves by
 *                         pthread_exit while a second one still emits:
 *                         the process must end when that one returns
 *   api N killed          the same, but the thread then requires the mpi
 *                         model, enters and leaves MPI_Init and is killed
 *                         (SIGKILL)
 *   api N forks           the same, but first 10 forks amid window changes
 *                         (ovni record only): before each, 200000 events;
 *                         each child emits 10000 and exits */
#include <ovni.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void emit(const char *mcv)
{
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, mcv);
	ovni_ev_set_clock(&ev, ovni_clock_now());
	ovni_ev_emit(&ev);
}

static void exec_event(int cpu)
{
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, "OHx");
	ovni_ev_set_clock(&ev, ovni_clock_now());
	int32_t creator = -1;
	uint64_t tag = 0;
	ovni_payload_add(&ev, (uint8_t *)&cpu, 4);
	ovni_payload_add(&ev, (uint8_t *)&creator, 4);
	ovni_payload_add(&ev, (uint8_t *)&tag, 8);
	ovni_ev_emit(&ev);
}

static void *second(void *arg)
{
	ovni_thread_init((int)syscall(SYS_gettid));
	exec_event(-1);
	for (int i = 0; i < 100000; i++) { /* windows past the first: the library's mapper thread runs */
		emit("OB.");
		if (i % 10000 == 0)
			usleep(2000); /* the first thread has left by now */
	}
	emit("OHe");
	ovni_flush();
	ovni_thread_free();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int tid = (int)syscall(SYS_gettid);
	ovni_version_check();
	ovni_proc_init(1, "host.api", getpid());
	ovni_thread_init(tid);
	ovni_add_cpu(0, 0);
	ovni_proc_set_rank(0, 1);
	ovni_attr_set_str("app.name", "api-test");
	ovni_attr_set_double("app.answer", 42);
	ovni_attr_set_json("app.obj", "{\"a\": [1, 2]}");
	if (ovni_attr_get_double("app.answer") != 42 || strcmp(ovni_attr_get_str("app.name"), "api-test") != 0)
		return 2;
	char *j = ovni_attr_get_json("app.obj");
	if (strcmp(j, "{\"a\":[1,2]}") != 0)
		return 3;
	free(j);
	ovni_mark_type(7, OVNI_MARK_STACK, "Phase");
	ovni_mark_label(7, 1, "compute");
	ovni_mark_label(7, 2, "io");

	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, "OHx");
	ovni_ev_set_clock(&ev, ovni_clock_now());
	int32_t cpu = 0, creator = -1;
	uint64_t tag = 0;
	ovni_payload_add(&ev, (uint8_t *)&cpu, 4);
	ovni_payload_add(&ev, (uint8_t *)&creator, 4);
	ovni_payload_add(&ev, (uint8_t *)&tag, 8);
	if (ovni_ev_size(&ev) != 28 || ovni_payload_size(&ev) != 16)
		return 4;
	ovni_ev_emit(&ev);
	for (int i = 0; i < n; i++) {
		ovni_mark_push(7, 1 + (i & 1));
		emit("OB.");
		ovni_mark_pop(7, 1 + (i & 1));
	}
	uint8_t blob[100];
	memset(blob, 0xab, sizeof(blob));
	struct ovni_ev jev = { 0 };
	ovni_ev_set_mcv(&jev, "OUj");
	ovni_ev_set_clock(&jev, ovni_clock_now());
	ovni_ev_jumbo_emit(&jev, blob, sizeof(blob));
	if (argc > 2 && strcmp(argv[2], "killed") == 0) {
		ovni_thread_require("mpi", "1.0.0");
		emit("MUi");
		emit("MUI");
		raise(SIGKILL);
	}
	if (argc > 2 && strcmp(argv[2], "forks") == 0) {
		/* the shim's mapper often has a window of the parent's in the
		 * making at the fork: the child must not wait for it */
		for (int k = 0; k < 10; k++) {
			for (int i = 0; i < 200000; i++)
				emit("OB.");
			pid_t c = fork();
			if (c < 0)
				return 6;
			if (c == 0) {
				for (int i = 0; i < 10000; i++)
					emit("OB.");
				exit(0);
			}
			int st;
			if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				return 7;
		}
	}
	pthread_t th;
	int leave = argc > 2 && strcmp(argv[2], "pthread-exit") == 0;
	if (leave && pthread_create(&th, NULL, second, NULL) != 0)
		return 5;
	emit("OHe");
	ovni_flush();
	ovni_thread_free();
	printf("api: %d marks\n", n);
	if (leave) {
		fflush(stdout);
		pthread_exit(NULL);
	}
	ovni_proc_fini();
	return 0;
}
