/* system(), popen() and pclose() in record mode. glibc starts their shell
 * through its own internal posix_spawn with environ, which no longer holds
 * the recorder's variables (env.c): these start it with them put back, so
 * that the shell and what it runs are recorded, with what POSIX asks of
 * both (and glibc does): system() ignores SIGINT and SIGQUIT and blocks
 * SIGCHLD while it waits; a popen() child closes the streams of earlier
 * ones. Outside record mode, glibc's own. */
#include "rt/rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
			char *const[], char *const[]);

/* The shell running cmd, started with the recorder's variables. An error
 * number, 0 when *pid runs. */
static int start_shell(pid_t *pid, const char *cmd, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr)
{
	spawn_fn real = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
	char **env = rt_env_traced(environ, NULL);
	if (!real || !env) {
		free(env);
		return ENOMEM;
	}
	char *argv[] = { "sh", "-c", (char *)cmd, NULL };
	int err = real(pid, "/bin/sh", fa, attr, argv, env);
	free(env);
	return err;
}

static int wait_shell(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* ---- system ---- */

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static int sys_running; /* calls in progress: the first ignores, the last restores */
static struct sigaction sys_int, sys_quit;

RT_API int system(const char *cmd)
{
	if (!rt_record_mode || !cmd) {
		int (*real)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
		return real ? real(cmd) : -1;
	}
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	pthread_mutex_lock(&sys_lock);
	if (sys_running++ == 0) {
		sigaction(SIGINT, &ign, &sys_int);
		sigaction(SIGQUIT, &ign, &sys_quit);
	}
	pthread_mutex_unlock(&sys_lock);
	sigset_t chld, old, dfl;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	/* the shell gets the caller's mask, and the dispositions that were not ignored */
	sigemptyset(&dfl);
	if (sys_int.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGINT);
	if (sys_quit.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGQUIT);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setsigmask(&attr, &old);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	pid_t pid;
	int err = start_shell(&pid, cmd, NULL, &attr);
	posix_spawnattr_destroy(&attr);
	/* a shell that cannot start is one that exited with 127 */
	int status = err ? 127 << 8 : wait_shell(pid);
	pthread_mutex_lock(&sys_lock);
	if (--sys_running == 0) {
		sigaction(SIGINT, &sys_int, NULL);
		sigaction(SIGQUIT, &sys_quit, NULL);
	}
	pthread_mutex_unlock(&sys_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return status;
}

/* ---- popen, pclose ---- */

struct piped {
	struct piped *next;
	FILE *f;
	int fd; /* the stream's end, which later children close */
	pid_t pid;
};

static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct piped *pipes;

/* A popen() mode: 'r' or 'w', then 'e' (close on exec) at most. */
static int parse_mode(const char *mode, int *reading, int *cloexec)
{
	if (!mode || (mode[0] != 'r' && mode[0] != 'w'))
		return -1;
	*reading = mode[0] == 'r';
	*cloexec = 0;
	for (const char *m = mode + 1; *m; m++) {
		if (*m != 'e')
			return -1;
		*cloexec = 1;
	}
	return 0;
}

/* The child's actions: its end of the pipe as stdin or stdout, and the
 * streams of earlier popen() calls closed (pipe_lock held). */
static int child_actions(posix_spawn_file_actions_t *fa, int end, int target)
{
	if (posix_spawn_file_actions_init(fa) != 0)
		return -1;
	int rc = posix_spawn_file_actions_adddup2(fa, end, target);
	for (struct piped *p = pipes; p && rc == 0; p = p->next)
		if (p->fd != target)
			rc = posix_spawn_file_actions_addclose(fa, p->fd);
	if (rc != 0)
		posix_spawn_file_actions_destroy(fa);
	return rc;
}

static FILE *record_popen(const char *cmd, int reading, int cloexec)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return NULL;
	int mine = reading ? fds[0] : fds[1], theirs = reading ? fds[1] : fds[0];
	int target = reading ? 1 : 0;
	/* its end must not be the number it takes (dup2 onto itself would
	 * keep close-on-exec on older glibc): a copy above stderr */
	if (theirs == target) {
		int copy = fcntl(theirs, F_DUPFD_CLOEXEC, 3);
		close(theirs);
		theirs = copy;
	}
	struct piped *p = malloc(sizeof(*p));
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int err = !p || theirs < 0 ? ENOMEM : 0;
	pthread_mutex_lock(&pipe_lock);
	if (!err)
		err = child_actions(&fa, theirs, target) != 0 ? ENOMEM : 0;
	if (!err) {
		err = start_shell(&pid, cmd, &fa, NULL);
		posix_spawn_file_actions_destroy(&fa);
	}
	FILE *f = NULL;
	if (!err && (f = fdopen(mine, reading ? "r" : "w")) != NULL) {
		if (!cloexec)
			fcntl(mine, F_SETFD, 0);
		*p = (struct piped){ pipes, f, mine, pid };
		pipes = p;
	}
	pthread_mutex_unlock(&pipe_lock);
	if (theirs >= 0)
		close(theirs);
	if (!f) {
		int e = err ? err : errno;
		close(mine);
		if (pid > 0)
			wait_shell(pid);
		free(p);
		errno = e;
	}
	return f;
}

RT_API FILE *popen(const char *cmd, const char *mode)
{
	int reading, cloexec;
	if (!rt_record_mode || !cmd) {
		FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *))dlsym(RTLD_NEXT, "popen");
		return real ? real(cmd, mode) : NULL;
	}
	if (parse_mode(mode, &reading, &cloexec) != 0) {
		errno = EINVAL;
		return NULL;
	}
	return record_popen(cmd, reading, cloexec);
}

RT_API int pclose(FILE *f)
{
	pthread_mutex_lock(&pipe_lock);
	struct piped **pp = &pipes;
	while (*pp && (*pp)->f != f)
		pp = &(*pp)->next;
	struct piped *p = *pp;
	if (p)
		*pp = p->next;
	pthread_mutex_unlock(&pipe_lock);
	if (!p) { /* one glibc opened, before record mode or outside it */
		int (*real)(FILE *) = (int (*)(FILE *))dlsym(RTLD_NEXT, "pclose");
		return real ? real(f) : -1;
	}
	pid_t pid = p->pid;
	free(p);
	fclose(f);
	return wait_shell(pid);
}
