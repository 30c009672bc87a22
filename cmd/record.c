/* ovni record: run a program with the libovni shim preloaded and turn what
 * it leaves into a finished trace. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "base/file.h"
#include "base/fmt.h"
#include "base/json.h"
#include "base/msg.h"
#include "cmd/blob.h"
#include "record/leftover.h"
#include "record/program.h"
#include "record/rankloom.h"
#include "record/salvage.h"
#include "record/stagedir.h"
#include "record/state.h"
#include "trace/events.h"
#include "trace/kspill.h"
#include "trace/stage.h"

static const char usage[] =
	"Usage: ovni record [-o TRACEDIR] [--force] [--tmpdir DIR] [--events KINDS]\n"
	"                   [--loom NAME] [--app-id N] [--no-kernel] -- APP [ARGS...]\n"
	"Runs APP with the libovni shim preloaded and writes a runtime trace of it\n"
	"and of every process it forks or execs: threads (creation, execution,\n"
	"end), CPU placement and affinity changes, time blocked in locks, waits\n"
	"and sleeps (mark 99), MPI calls (mpi model; MPI launchers are not traced,\n"
	"their ranks are), OpenMP with LLVM libomp (openmp model, through OMPT),\n"
	"and every event of programs that use the libovni API (the shim is also\n"
	"libovni.so.1 for them). Streams left unfinished (a crash, SIGKILL,\n"
	"threads still running at exit) are ended at their last event. Prints one\n"
	"summary line at the end, with how APP ended, and ends as APP did (its exit\n"
	"status, or killed by the same signal). Signals other processes send to the\n"
	"recorder go to APP (SIGCONT only while APP is stopped); once APP has ended,\n"
	"the recorder waits for what it left running, names it, and passes it\n"
	"SIGTERM, SIGINT, SIGHUP and SIGQUIT.\n"
	"\n"
	"Options:\n"
	"  -o TRACEDIR      where the trace goes (default: $OVNI_TRACEDIR, else ovni):\n"
	"                   a new or empty directory, checked before APP starts\n"
	"  --force          replace the trace TRACEDIR holds (refused otherwise)\n"
	"  --tmpdir DIR     write streams under DIR and move them to TRACEDIR when\n"
	"                   each thread ends (default: $OVNI_TMPDIR)\n"
	"  --events KINDS   comma-separated models to record (ovni, nanos6, nosv,\n"
	"                   nodes, tampi, mpi, openmp, kernel) or all (default:\n"
	"                   $OVNI_EVENTS, else all); ovni is always recorded\n"
	"  --loom NAME      loom name (default: <hostname>.<pid of ovni record>)\n"
	"  --app-id N       application id of every process, N >= 1 (default 1)\n"
	"  --kernel         record the kernel's context switches of every thread\n"
	"                   (perf_event; the default when --events selects kernel):\n"
	"                   run `ovni sort` on the trace before `ovni emu`, or let\n"
	"                   emu sort it in memory. Where perf_event_paranoid or\n"
	"                   the container forbids it, one notice and no switches\n"
	"  --no-kernel      do not record context switches\n"
	"  -h, --help       show this help\n";

static pid_t child, self;
static volatile sig_atomic_t app_gone; /* child reaped: its pid may be another's */
static volatile sig_atomic_t leftover_sig; /* for what APP left behind */
#define WAKER_POLL_NS 10000000 /* 10 ms, then twice as long each time up to: */
#define WAKER_POLL_MAX_NS 160000000 /* how late a stopped recorder follows its program */

/* Whether the recorder passes sig on to the program (when a process sent it
 * to the recorder). Not: those it cannot catch, SIGCHLD (its own wait),
 * SIGPIPE and SIGXFSZ (ignored here, the program's own); SIGCONT only to a
 * stopped program (see forward). */
static int forwarded(int sig)
{
	switch (sig) {
	case SIGKILL: case SIGSTOP: case SIGCHLD: case SIGPIPE: case SIGXFSZ:
		return 0;
	}
	return 1;
}

static int job_stop(int sig)
{
	return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Stops the recorder by sig as its default action would, also from a
 * handler of sig (where it is blocked). Async-signal-safe. */
static void stop_self(int sig)
{
	struct sigaction dfl, mine;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (sig != SIGSTOP && sigaction(sig, &dfl, &mine) != 0)
		return;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL); /* stopped here until a SIGCONT */
	if (sig != SIGSTOP)
		sigaction(sig, &mine, NULL);
}

/* A fault of the recorder itself, not a signal to pass on. */
static int synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
	       sig == SIGSYS || sig == SIGABRT;
}

/* 1 if pid is stopped (job control), 0 if not, -1 if /proc cannot say.
 * Async-signal-safe. */
static int is_stopped(pid_t pid)
{
	char path[48] = "/proc/", buf[512];
	size_t len = 6 + fmt_u64(path + 6, (uint64_t)pid);
	memcpy(path + len, "/stat", 6);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	char *end = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return end && end[1] == ' ' ? end[2] == 'T' : -1;
}

/* While the recorder stands stopped for its program, a process of its own
 * wakes it once the program runs again or is gone (continued through its
 * own pid, say), so that a recording never stays stopped for nothing. It
 * ignores every signal (those to the process group are the program's) and
 * ends with the recorder. -1 when it cannot be made: then only a SIGCONT
 * to the recorder wakes it, as before. */
static pid_t spawn_waker(void)
{
	pid_t w = fork();
	if (w != 0)
		return w;
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &ign, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (long ns = WAKER_POLL_NS;; ns = ns < WAKER_POLL_MAX_NS ? 2 * ns : ns) {
		nanosleep(&(struct timespec){ 0, ns }, NULL);
		if (getppid() != self)
			_exit(0);
		if (is_stopped(child) != 1 && is_stopped(self) == 1)
			kill(self, SIGCONT);
	}
}

/* Mirrors the program's stop by sig, with a waker standing by. */
static void stop_with_program(int sig)
{
	pid_t w = spawn_waker();
	stop_self(sig);
	if (w > 0) {
		kill(w, SIGKILL);
		while (waitpid(w, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/* A signal another process sent to the recorder goes to the program. One
 * from the kernel (si_code > 0: the terminal, which already reached the
 * whole process group; a fault) or from the recorder itself stays here:
 * a fault then takes its default action, and so does a stop of job
 * control (a read or write in the background), but a terminal's SIGTSTP
 * while the program runs: the recorder stops when the program does (the
 * wait loop), and not if the program catches it and goes on (once it has
 * ended, with what it left behind, as before). One from the program is
 * dropped: it went to its own process group (it got it too) or to its
 * parent, never back to itself. SIGCONT only wakes a program that is
 * stopped (a process group's SIGCONT woke it already). */
static void forward(int sig, siginfo_t *info, void *ctx)
{
	(void)ctx;
	int err = errno;
	if (!info || info->si_code > 0 || info->si_pid == self) {
		if (synchronous(sig))
			signal(sig, SIG_DFL);
		else if (job_stop(sig) && !(sig == SIGTSTP && info && info->si_code == SI_KERNEL && !app_gone))
			stop_self(sig);
	} else if (app_gone) {
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			leftover_sig = sig; /* the wait loop passes it on */
	} else if (child > 0 && info->si_pid != child && (sig != SIGCONT || is_stopped(child) != 0)) {
		kill(child, sig);
	}
	errno = err;
}

static int parse_app_id(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > INT32_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

static int check_events(const char *list)
{
	if (strcmp(list, "all") == 0)
		return 0;
	char buf[256];
	if (strlen(list) >= sizeof(buf) || !*list)
		return -1;
	strcpy(buf, list);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!model_info_by_name(tok)) {
			msg_err("--events: no model '%s' (models: ovni nanos6 nosv nodes tampi mpi openmp kernel, or all)", tok);
			return -1;
		}
	return 0;
}

/* Whether the --events list names model (or is "all"). */
static int events_select(const char *list, const char *model)
{
	size_t n = strlen(model);
	for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',') {
		size_t len = strcspn(p, ",");
		if ((len == 3 && strncmp(p, "all", 3) == 0) || (len == n && strncmp(p, model, n) == 0))
			return 1;
	}
	return 0;
}

/* Online CPUs of this machine, from sysfs (else 0..N-1). */
static uint32_t online_cpus(int32_t *phyid, uint32_t max)
{
	uint32_t n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (f) {
		long a, b;
		int c;
		while (fscanf(f, "%ld", &a) == 1) {
			b = a;
			if ((c = fgetc(f)) == '-') {
				if (fscanf(f, "%ld", &b) != 1)
					break;
				c = fgetc(f);
			}
			for (long i = a; i <= b && n < max; i++)
				phyid[n++] = (int32_t)i;
			if (c != ',')
				break;
		}
		fclose(f);
	}
	if (n == 0) {
		long k = sysconf(_SC_NPROCESSORS_ONLN);
		for (long i = 0; i < (k > 0 ? k : 1) && n < max; i++)
			phyid[n++] = (int32_t)i;
	}
	return n;
}

/* State files no recorder runs with (killed by SIGKILL, say). A recorder
 * holds a lock on its own while it runs, so a state file no one locks is a
 * dead recorder's; unless made in the last minute (it is locked just after
 * it is made). The PID in its name cannot tell: the directory may be
 * shared with other PID namespaces. */
#define STATE_STALE_S 60

static void sweep_states(int dfd, const char *dir)
{
	size_t n;
	char **names = file_dir_names(dir, &n);
	if (!names)
		return;
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(names[i], "run.", 4) != 0)
			continue;
		int fd = openat(dfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat a, b;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && S_ISREG(a.st_mode) &&
		    now - a.st_mtime > STATE_STALE_S &&
		    fstatat(dfd, names[i], &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			unlinkat(dfd, names[i], 0);
		close(fd);
	}
	file_names_free(names, n);
}

/* The shared state file, in the private directory: run.PID, or run.PID-K
 * when a recorder of another PID namespace has that name. */
static struct rt_state *make_state(char *path, size_t n)
{
	char dir[4096];
	int dfd = shim_private_dir(dir, sizeof(dir));
	if (dfd < 0)
		return NULL;
	if (file_join_to(path, n, dir, "run.-2147483648-99") >= n) { /* the longest name below */
		close(dfd);
		msg_err("private directory path too long");
		return NULL;
	}
	sweep_states(dfd, dir);
	char name[40];
	int fd = -1;
	for (int k = 0; k < 100; k++) {
		if (k == 0)
			snprintf(name, sizeof(name), "run.%ld", (long)getpid());
		else
			snprintf(name, sizeof(name), "run.%ld-%d", (long)getpid(), k);
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	close(dfd);
	file_join_to(path, n, dir, name);
	if (fd < 0 || ftruncate(fd, sizeof(struct rt_state)) != 0) {
		msg_err("cannot create %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path); /* a file size limit leaves it empty */
		}
		return NULL;
	}
	/* fd stays open, close-on-exec (not APP's): the lock lasts until the
	 * recorder exits. Where flock fails, no one sweeps anything. */
	flock(fd, LOCK_EX);
	struct rt_state *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		msg_err("cannot map %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return NULL;
	}
	s->ncpus = online_cpus(s->phyid, RT_STATE_MAXCPU);
	s->pidns = rt_state_pidns_now();
	/* what the threads of killed recordings left goes into their streams */
	struct stat sd;
	if (stage_dir(s->stage, sizeof(s->stage), 1) == 0 && stat(s->stage, &sd) == 0) {
		s->stage_dev = (uint64_t)sd.st_dev;
		s->stage_ino = (uint64_t)sd.st_ino;
		stagedir_drain(s->stage, NULL);
	} else {
		s->stage[0] = '\0';
	}
	s->magic = RT_STATE_MAGIC;
	return s;
}

/* The user's environment, before the recorder sets its variables: APP
 * gets it as it is, then the recorder's block (lib/record/state.h). */
static char **user_env;
static char *underscore; /* "_=prog" in APP's environment */

static void keep_user_env(void)
{
	extern char **environ;
	size_t n = 0;
	while (environ && environ[n])
		n++;
	user_env = malloc((n + 1) * sizeof(*user_env));
	if (!user_env)
		die("out of memory");
	memcpy(user_env, environ, n * sizeof(*user_env)); /* setenv leaves the strings alone */
	user_env[n] = NULL;
}

/* APP's environment: the user's, "_" set to prog as a shell sets it for
 * the program it runs, then the block of the recorder's variables as they
 * are set now, RT_ENV_FIRST first. */
static char **app_env(const char *prog)
{
	size_t n = 0;
	while (user_env[n])
		n++;
	char **e = malloc((n + RT_ENV_NVARS + 1) * sizeof(*e));
	char *us = underscore = malloc(strlen(prog) + 3);
	if (!e || !us)
		die("out of memory");
	sprintf(us, "_=%s", prog);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		e[k++] = strncmp(user_env[i], "_=", 2) == 0 ? us : user_env[i];
	for (size_t i = 0; i < RT_ENV_NVARS; i++) {
		const char *name = rt_env_vars[i].name, *v = getenv(name);
		if (!v)
			continue;
		char *entry = malloc(strlen(name) + strlen(v) + 2);
		if (!entry)
			die("out of memory");
		sprintf(entry, "%s=%s", name, v);
		e[k++] = entry;
	}
	e[k] = NULL;
	return e;
}

static void free_app_env(char **e)
{
	size_t k = 0;
	while (user_env[k])
		k++;
	for (; e[k]; k++)
		free(e[k]);
	free(e);
	free(underscore);
	free(user_env);
	user_env = NULL;
}

/* A file size limit (ulimit -f) makes the recorder's writes fail with a
 * message instead of killing it with SIGXFSZ, and a closed pipe on its
 * standard error loses the summary, not APP's status, with SIGPIPE; APP
 * gets both dispositions back. */
static struct sigaction xfsz_orig, pipe_orig;

static void prepend_env(const char *name, const char *value)
{
	const char *old = getenv(name);
	if (!old || !*old) {
		setenv(name, value, 1);
		return;
	}
	size_t n = strlen(value) + strlen(old) + 2;
	char *v = malloc(n);
	if (!v)
		die("out of memory");
	snprintf(v, n, "%s:%s", value, old);
	setenv(name, v, 1);
	free(v);
}

/* An absolute path for dir, created if missing. */
static int absolute_dir(const char *dir, char *out)
{
	if (file_mkdirs(dir, 0) != 0) {
		msg_err("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!realpath(dir, out)) {
		msg_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* What -o names before the run (OUT_MIXED: a trace with files of
 * another kind beside it, which --force must not take away). */
enum out_kind { OUT_NEW, OUT_EMPTY, OUT_TRACE, OUT_MIXED, OUT_OTHER, OUT_JOB };

/* The file in a trace directory naming the run that records into it: the
 * recorders of one MPI job (one per rank) share it, any other run is kept
 * out. */
#define MARKER ".ovni-record"

/* What the tools write beside the looms of a trace: the emulator's
 * timelines and views, ovni sync's offsets. */
static int trace_product(const char *name)
{
	static const char *const ext[] = { ".prv", ".pcf", ".row" };
	size_t n = strlen(name);
	for (int i = 0; i < 3; i++)
		if (n > 4 && strcmp(name + n - 4, ext[i]) == 0)
			return 1;
	return strcmp(name, "cfg") == 0 || strcmp(name, "clock-offsets.txt") == 0;
}

/* A trace directory has a loom.* directory or the marker (the emulator's
 * output, written beside them by ovniemu, may be there too); OUT_JOB when
 * the marker names job; its first other entry goes to foreign (if not
 * NULL). */
static enum out_kind out_kind(const char *dir, const char *job, char foreign[NAME_MAX + 1])
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return errno == ENOENT ? OUT_NEW : OUT_OTHER;
	if (!S_ISDIR(st.st_mode))
		return OUT_OTHER;
	DIR *d = opendir(dir);
	if (!d) /* gone since the stat: rank 0 set it aside for --force */
		return errno == ENOENT ? OUT_NEW : OUT_OTHER;
	int entries = 0, looms = 0, marked = 0, others = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (strncmp(e->d_name, MARKER ".", sizeof(MARKER)) == 0)
			continue; /* a marker being made by another rank */
		entries++;
		char p[PATH_MAX + 300];
		file_join_to(p, sizeof(p), dir, e->d_name); /* sized to fit */
		/* a loom.* that stat cannot see is one that moved away meanwhile
		 * (rank 0 setting the whole trace aside for --force): not foreign */
		int loomname = strncmp(e->d_name, "loom.", 5) == 0;
		int marker = strcmp(e->d_name, MARKER) == 0;
		looms += loomname && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
		marked |= marker;
		if (!loomname && !marker && !trace_product(e->d_name) && others++ == 0 && foreign)
			snprintf(foreign, NAME_MAX + 1, "%s", e->d_name);
	}
	closedir(d);
	if (marked && job) {
		char path[PATH_MAX + 32], *buf = NULL;
		size_t cap = 0, len = 0;
		snprintf(path, sizeof(path), "%s/" MARKER, dir);
		int same = file_read_all(path, &buf, &cap, &len) == 0 && len == strlen(job) + 1 &&
			   memcmp(buf, job, len - 1) == 0 && buf[len - 1] == '\n';
		free(buf);
		if (same)
			return OUT_JOB;
	}
	if (looms || marked)
		return others ? OUT_MIXED : OUT_TRACE;
	return entries ? OUT_OTHER : OUT_EMPTY;
}

/* Claims dir for job: the marker appears once, whole (written beside, then
 * linked, which fails if it exists); 0 if it names job. */
static int mark_tracedir(const char *dir, const char *job)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/" MARKER, dir);
	snprintf(tmp, sizeof(tmp), "%s/" MARKER ".%ld", dir, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	char line[600];
	int n = snprintf(line, sizeof(line), "%s\n", job);
	int rc = file_write_all(fd, line, (size_t)n);
	if (close(fd) != 0 || rc != 0 || (link(tmp, path) != 0 && errno != EEXIST)) {
		int err = errno;
		unlink(tmp);
		errno = err;
		return -1;
	}
	unlink(tmp);
	if (out_kind(dir, job, NULL) == OUT_JOB)
		return 0;
	errno = EEXIST; /* a run of another job marked it first */
	return -1;
}

/* Value of "--control-port X" in the command line of process pid, hydra's
 * (MPICH) address for one job across all its nodes. */
static int hydra_port(pid_t pid, char *out, size_t n)
{
	char path[64], *buf = NULL;
	size_t cap = 0, len = 0;
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	int rc = -1;
	/* NUL-separated arguments, the last one terminated too */
	if (file_read_all(path, &buf, &cap, &len) == 0 && len > 0 && buf[len - 1] == '\0') {
		for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
			if (strcmp(buf + i, "--control-port") == 0 && i + 15 < len) {
				snprintf(out, n, "hydra %s", buf + i + 15);
				rc = 0;
				break;
			}
		}
	}
	free(buf);
	return rc;
}

/* The MPI job this recorder is one rank of, from the launcher (PMIx or
 * Open MPI job id, Slurm step, MPICH hydra's control port); else a key
 * of this run alone. */
static void job_key(int ranked, char *out, size_t n)
{
	const char *v, *w;
	if (ranked && (v = getenv("PMIX_NAMESPACE")) && *v)
		snprintf(out, n, "pmix %s", v);
	else if (ranked && (v = getenv("OMPI_MCA_ess_base_jobid")) && *v)
		snprintf(out, n, "ompi %s", v);
	else if (ranked && (v = getenv("SLURM_JOB_ID")) && *v && (w = getenv("SLURM_STEP_ID")) && *w)
		snprintf(out, n, "slurm %s.%s", v, w);
	else if (!ranked || hydra_port(getppid(), out, n) != 0) {
		char host[256] = "localhost";
		struct timespec ts;
		gethostname(host, sizeof(host) - 1);
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(out, n, "run %s %ld %lld.%09ld", host, (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
	}
}

struct run {
	char tracedir[PATH_MAX], tmpdir[PATH_MAX], loom[512];
	char prog[PATH_MAX]; /* the file APP names */
	char old[PATH_MAX + 64]; /* --force: the trace replaced, set aside until APP runs */
	int made, tmp_made; /* -o (--tmpdir) did not exist: a failed start removes it */
	int app_id, has_rank, rank, nranks;
	struct rt_state *state;
};

static int env_rank(const char *rv, const char *nv, struct run *r)
{
	const char *a = getenv(rv), *b = getenv(nv);
	if (!a || !b)
		return 0;
	int x = atoi(a), y = atoi(b);
	if (x < 0 || y <= 0 || x >= y)
		return 0;
	r->has_rank = 1;
	r->rank = x;
	r->nranks = y;
	return 1;
}

/* The same launcher variables the shim reads (lib/rt/record.c). */
static void find_rank(struct run *r)
{
	static const char *const vars[][2] = {
		{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" }, { "PMIX_RANK", "PMIX_SIZE" },
		{ "PMI_RANK", "PMI_SIZE" }, { "SLURM_PROCID", "SLURM_NTASKS" }, { "SLURM_PROCID", "SLURM_NPROCS" },
	};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (env_rank(vars[i][0], vars[i][1], r))
			return;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct rt_state_stream *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The context switch records the kernel dropped for the thread of stream
 * directory dir, as the shim noted in its metadata. */
static uint64_t kernel_lost(const char *dir)
{
	char path[PATH_MAX + 1200];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	struct json *m = json_parse_file(path);
	long long n = 0;
	if (json_int(json_dotget(m, "record.kernel_lost"), &n) != 0 || n < 0)
		n = 0;
	json_free(m);
	return (uint64_t)n;
}

/* A stream whose thread ended it cleanly, as the shim says in the state
 * (e) and the file's size confirms: counted without reading it (a clean run
 * never re-reads its trace). 0 when it must be checked by salvage_stream. */
static int ended_cleanly(const char *dir, const struct rt_state_stream *e, struct salvage_result *res)
{
	char path[PATH_MAX + 1200];
	struct stat st;
	if (!atomic_load_explicit(&e->done, memory_order_acquire))
		return 0;
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	if (stat(path, &st) != 0 || (uint64_t)st.st_size != e->bytes)
		return 0;
	memset(res, 0, sizeof(*res));
	res->events = e->events;
	res->bytes = e->bytes;
	return 1;
}

/* The stream.json the shim handed over in the state, as it could not
 * write it (no descriptor left): written before the stream is checked. */
static void write_handed_meta(const struct rt_state *s, const struct rt_state_stream *e, const char *dir)
{
	uint64_t m = e->meta, off = RT_STATE_META_OFF(m), len = RT_STATE_META_LEN(m);
	if (!m || off > RT_STATE_META_BYTES || len > RT_STATE_META_BYTES - off)
		return;
	char path[PATH_MAX + 1200];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	const char *text = s->meta + off;
	char *own = NULL;
	if (m & RT_STATE_META_UNFINISHED) { /* not ended: salvage_stream ends it */
		struct json *j = json_parse(text, len);
		if (!j || json_dotset(j, "ovni.finished", json_new_number(0)) != 0 ||
		    !(own = json_write_pretty(j, &len))) {
			json_free(j);
			msg_warn("%s: the metadata the thread left cannot be read", path);
			return;
		}
		json_free(j);
		text = own;
	}
	if (file_write_atomic_at(AT_FDCWD, path, text, len, 0644, 0) != 0)
		msg_warn("cannot write %s: %s", path, strerror(errno));
	free(own);
}

/* Ends what was left unfinished, moves it out of the tmpdir, counts. */
static void finish_trace(struct run *r, double elapsed, const char *app, const char *ending)
{
	struct rt_state *s = r->state;
	uint32_t n = atomic_load(&s->nstreams);
	if (n > RT_STATE_MAXSTREAMS) {
		msg_warn("%u streams, only the first %u are checked", n, RT_STATE_MAXSTREAMS);
		n = RT_STATE_MAXSTREAMS;
	}
	struct rt_state_stream *list = malloc((n ? n : 1) * sizeof(*list));
	if (!list)
		die("out of memory");
	memcpy(list, s->streams, n * sizeof(*list));
	qsort(list, n, sizeof(*list), cmp_stream);
	uint64_t events = 0, bytes = 0;
	uint32_t threads = 0, cut = 0, procs = 0, lost_threads = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (i > 0 && cmp_stream(&list[i], &list[i - 1]) == 0)
			continue;
		if (i == 0 || list[i].pid != list[i - 1].pid)
			procs++;
		char final[PATH_MAX + 1100], tmp[PATH_MAX + 1100];
		const char *rel = "loom.%s/proc.%d/thread.%d";
		char relp[1024];
		snprintf(relp, sizeof(relp), rel, r->loom, list[i].pid, list[i].tid);
		file_join_to(final, sizeof(final), r->tracedir, relp); /* the buffers are sized to fit */
		const char *dir = final;
		if (r->tmpdir[0]) {
			snprintf(tmp, sizeof(tmp), "%s/%s/stream.obs", r->tmpdir, relp);
			if (access(tmp, F_OK) == 0) {
				file_join_to(tmp, sizeof(tmp), r->tmpdir, relp);
				dir = tmp;
			}
		}
		struct salvage_info in = { r->loom, list[i].pid, list[i].tid, r->app_id, r->has_rank, r->rank,
					   r->nranks, s->phyid, s->ncpus, list[i].exited };
		struct salvage_result res;
		int single = i + 1 == n || cmp_stream(&list[i + 1], &list[i]) != 0;
		write_handed_meta(s, &list[i], dir);
		if (!(single && ended_cleanly(dir, &list[i], &res)) && salvage_stream(dir, &in, &res) != 0)
			continue;
		char spill[PATH_MAX + 1200];
		if (file_join_to(spill, sizeof(spill), dir, KSPILL_NAME) < sizeof(spill))
			unlink(spill); /* its switches are in the stream now */
		if (res.dropped) {
			rmdir(final); /* made up front with --tmpdir */
			msg_warn("%s: the thread was killed before its first event; it has no stream", relp);
			continue;
		}
		threads++;
		events += res.events;
		bytes += res.bytes;
		if (res.repaired && !list[i].exited) { /* else it ended with its process */
			cut++;
			if (res.spilled)
				msg_warn("%s: the thread did not finish; its stream ends at its last event, after "
					 "the %" PRIu64 " context switch events it had not written yet", relp, res.spilled);
			else
				msg_warn("%s: the thread did not finish; its stream ends at its last event", relp);
		}
		if (dir != final) {
			char a[PATH_MAX + 1200], b[PATH_MAX + 1200];
			const char *files[] = { "stream.obs", "stream.json" };
			file_mkdirs(final, 0);
			for (int k = 0; k < 2; k++) {
				file_join_to(a, sizeof(a), dir, files[k]);
				file_join_to(b, sizeof(b), final, files[k]);
				if (file_move(a, b) != 0)
					msg_warn("cannot move %s to %s: %s", a, b, strerror(errno));
			}
			rmdir(dir);
		}
		uint64_t lost = kernel_lost(final);
		if (lost) {
			lost_threads++;
			msg_warn("%s: the kernel dropped %" PRIu64 " of its context switch records", relp, lost);
		}
	}
	free(list);
	if (lost_threads)
		msg_warn("the kernel dropped context switch records of %u thread%s, named above: their "
			 "perf rings filled faster than they were emptied", lost_threads, lost_threads == 1 ? "" : "s");
	if (threads == 0)
		msg_warn("nothing was recorded: the program (or the interpreter of a script) may be statically linked, or it cleared LD_PRELOAD");
	char other[600];
	unsigned moved;
	if (rankloom_split(r->tracedir, r->loom, other, sizeof(other), &moved) == 0 && moved)
		msg_info("%u process%s without an MPI rank moved to loom %s (ovni emu wants a rank in every process of a loom or in none)",
			 moved, moved == 1 ? "" : "es", other);
	double mib = (double)bytes / (1024.0 * 1024.0);
	msg_info("%u process%s, %u thread%s, %" PRIu64 " events, %.2f MiB in %.2f s%s; trace in %s; %s %s",
		 procs, procs == 1 ? "" : "es", threads, threads == 1 ? "" : "s", events, mib, elapsed,
		 cut ? " (some threads cut, see above)" : "", r->tracedir, app, ending);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The program APP names, if the shim can be preloaded into it: 0, or the
 * exit status after a message. */
static int check_program(struct run *r, const char *name)
{
	char *prog = r->prog;
	if (elf_find_program(name, prog, sizeof(r->prog)) != 0) {
		msg_err("%s: command not found", name);
		return 127;
	}
	char interp[256];
	int st = elf_is_static(prog, interp, sizeof(interp));
	if (st == 1) {
		msg_err("%s: statically linked: the libovni shim can only be preloaded into dynamically linked programs; link it dynamically to record it",
			prog);
		return 1;
	}
	if (strstr(interp, "musl")) {
		msg_err("%s: linked against musl (%s): the libovni shim needs a glibc program", prog, interp);
		return 1;
	}
	return 0;
}

/* -o before the run: a new or empty directory, the one the other ranks of
 * this MPI job record into, or a trace that --force replaces (set aside
 * now, removed once APP runs; only by rank 0 or a recorder without a rank,
 * the others wait for it). 0, or -1 after a message. */
static int prepare_tracedir(struct run *r, const char *out, int force)
{
	char job[600];
	job_key(r->has_rank, job, sizeof(job));
	int replacer = !r->has_rank || r->rank == 0;
	for (int waited = 0;; waited++) {
		char foreign[NAME_MAX + 1];
		enum out_kind k = out_kind(out, job, foreign);
		if (k == OUT_OTHER) {
			msg_err("-o %s: exists and is not a trace directory (nor empty); name a new one", out);
			return -1;
		}
		if (k == OUT_MIXED) {
			msg_err("-o %s: holds a trace and files of another kind (%s)%s; move them or name a new one",
				out, foreign, force ? ", which --force would remove with it" : "");
			return -1;
		}
		if (k == OUT_TRACE && !force) {
			msg_err("-o %s: holds a trace already; --force replaces it", out);
			return -1;
		}
		if (k == OUT_TRACE && !replacer) {
			if (waited >= 600) {
				msg_err("-o %s: rank 0 did not replace the trace there in 30 s", out);
				return -1;
			}
			nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
			continue;
		}
		if (k == OUT_TRACE) {
			if ((size_t)snprintf(r->old, sizeof(r->old), "%s.replaced.%ld", out, (long)getpid()) >= sizeof(r->old) ||
			    rename(out, r->old) != 0) {
				msg_err("-o %s: cannot replace it: %s", out, strerror(errno));
				r->old[0] = '\0';
				return -1;
			}
		}
		r->made = k == OUT_NEW || k == OUT_TRACE;
		break;
	}
	if (absolute_dir(out, r->tracedir) != 0 || mark_tracedir(r->tracedir, job) != 0) {
		if (r->tracedir[0] && errno == EEXIST)
			msg_err("-o %s: another run took it meanwhile", out);
		else if (r->tracedir[0])
			msg_err("-o %s: cannot mark it: %s", out, strerror(errno));
		r->made = 0;
		if (r->old[0])
			rename(r->old, out);
		return -1;
	}
	return 0;
}

/* APP did not start: the trace directory goes as it came (a replaced trace
 * back in its place). */
static void undo_tracedir(struct run *r)
{
	if (r->tmp_made)
		file_remove_tree(r->tmpdir);
	if (r->made)
		file_remove_tree(r->tracedir);
	if (r->old[0] && rename(r->old, r->tracedir) != 0)
		msg_warn("the replaced trace is left in %s: %s", r->old, strerror(errno));
}

/* "exited with status N" or "was killed by SIGNAME". */
static void describe_end(int status, char *buf, size_t n)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",	[SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
		[SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",	[SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",
		[SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1",	[SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",	[SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT",
		[SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT",	[SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP",
		[SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",	[SIGURG] = "SIGURG",   [SIGXCPU] = "SIGXCPU",
		[SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
		[SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",	[SIGSYS] = "SIGSYS",
	};
	if (WIFEXITED(status)) {
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
		return;
	}
	int sig = WTERMSIG(status);
	const char *name = sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) ? names[sig] : NULL;
	char num[32];
	if (!name) {
		snprintf(num, sizeof(num), "signal %d", sig);
		name = num;
	}
	snprintf(buf, n, "was killed by %s (%s)%s", name, strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
}

/* After APP has ended, how long the processes it left behind may go on
 * before the recorder says that it waits for them. */
#define LEFTOVER_NOTICE_S 1.0

/* One line: APP (argv0) ended with status, and what it left behind runs
 * on. Returns 1 (told). */
static int tell_leftovers(const char *argv0, int status)
{
	enum { MAX = 64 };
	pid_t pids[MAX];
	size_t n = leftover_list(pids, MAX);
	if (n == 0)
		return 1; /* gone since, or no /proc to say which */
	char ending[128], names[512];
	describe_end(status, ending, sizeof(ending));
	leftover_names(pids, n < MAX ? n : MAX, names, sizeof(names));
	const char *base = strrchr(argv0, '/');
	char what[48] = "the process";
	if (n > 1)
		snprintf(what, sizeof(what), "the %zu processes", n);
	msg_info("%s %s; waiting for %s it left behind: %s (a SIGTERM or SIGINT sent to ovni record goes to "
		 "%s; a second one kills %s)", base ? base + 1 : argv0, ending, what, names, n > 1 ? "them" : "it",
		 n > 1 ? "them" : "it");
	return 1;
}

/* The recorder ends the way APP did, killed by sig, so that its parent
 * sees the same (a shell that stops on SIGINT, a status of -sig), without
 * a core file of its own; 128 + sig if it is still alive. */
static int die_of(int sig)
{
	fflush(NULL);
	struct rlimit core;
	if (getrlimit(RLIMIT_CORE, &core) == 0) {
		/* 1 byte: no core file, and none through a core_pattern pipe */
		core.rlim_cur = core.rlim_max >= 1 ? 1 : 0;
		setrlimit(RLIMIT_CORE, &core);
	}
	signal(sig, SIG_DFL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	return 128 + sig;
}

/* The state file goes, after the staging files of APP's threads. */
static void end_state(struct run *r, const char *path)
{
	if (r->state->stage[0])
		stagedir_drain(r->state->stage, path);
	unlink(path);
}

/* Gives back the dispositions orig[] of the signals in held (APP's, or the
 * recorder's own once APP has ended). */
static void restore_signals(const sigset_t *held, const struct sigaction *orig)
{
	for (int sig = 1; sig < _NSIG; sig++)
		if (sigismember(held, sig))
			sigaction(sig, &orig[sig], NULL);
}

static int launch(struct run *r, char **argv)
{
	const char *prog = r->prog;
	char shimdir[PATH_MAX], state_path[PATH_MAX], lib[PATH_MAX + 32];
	struct shim_blob blob = shim_embedded();
	if (shim_install(&blob, shimdir, sizeof(shimdir)) != 0) {
		undo_tracedir(r);
		return 1;
	}
	r->state = make_state(state_path, sizeof(state_path));
	if (!r->state) {
		undo_tracedir(r);
		return 1;
	}
	snprintf(lib, sizeof(lib), "%s/libovni.so.1", shimdir);
	prepend_env("LD_PRELOAD", lib);
	prepend_env("LD_LIBRARY_PATH", shimdir);
	setenv("OVNI_RECORD_STATE", state_path, 1);
	setenv("OVNI_RECORD_LOOM", r->loom, 1);
	char app[32];
	snprintf(app, sizeof(app), "%d", r->app_id);
	setenv("OVNI_RECORD_APPID", app, 1);
	setenv("OVNI_TRACEDIR", r->tracedir, 1);
	if (r->tmpdir[0])
		setenv("OVNI_TMPDIR", r->tmpdir, 1);
	else
		unsetenv("OVNI_TMPDIR");
	/* Processes the program leaves behind are ours to wait for. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Forwarding is set up before the fork and the signals held until the
	 * child is known: one sent right after the start must not kill the
	 * recorder and leave the program running untraced to the end. A signal
	 * ignored at start (nohup, trap '' INT) stays ignored, here and in APP. */
	struct sigaction sa, orig[_NSIG];
	memset(orig, 0, sizeof(orig));
	sigset_t held, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&held);
	self = getpid();
	for (int sig = 1; sig < _NSIG; sig++)
		if (forwarded(sig))
			sigaddset(&held, sig); /* fails on the C library's own: not ours to take */
	/* Held before the handler is set: one caught before the fork would find no child to pass it to. */
	sigprocmask(SIG_BLOCK, &held, &old);
	for (int sig = 1; sig < _NSIG; sig++) {
		if (!sigismember(&held, sig) || sigaction(sig, NULL, &orig[sig]) != 0)
			continue;
		if (orig[sig].sa_handler != SIG_IGN)
			sigaction(sig, &sa, NULL);
	}
	/* An ignored SIGCHLD would reap APP before we learn how it ended. */
	struct sigaction chld, dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl, &chld);
	/* The child writes errno here if exec fails; EOF says APP runs. */
	int ex[2];
	if (pipe2(ex, O_CLOEXEC) != 0) {
		msg_err("cannot make a pipe: %s", strerror(errno));
		end_state(r, state_path);
		return 1;
	}
	char **env = app_env(prog);
	double t0 = now_s();
	child = fork();
	int fork_err = errno;
	if (child == 0) {
		/* APP gets the dispositions and mask the recorder was given. */
		restore_signals(&held, orig);
		sigaction(SIGCHLD, &chld, NULL);
		sigaction(SIGXFSZ, &xfsz_orig, NULL);
		sigaction(SIGPIPE, &pipe_orig, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execve(prog, argv, env);
		int err = errno;
		(void)!write(ex[1], &err, sizeof(err));
		_exit(127);
	}
	close(ex[1]);
	free_app_env(env);
	int err = 0;
	ssize_t got = child > 0 ? read(ex[0], &err, sizeof(err)) : 0;
	close(ex[0]);
	if (child < 0 || got > 0) {
		if (child > 0)
			waitpid(child, NULL, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (child < 0)
			msg_err("cannot fork: %s", strerror(fork_err));
		else
			msg_err("cannot run %s: %s", prog, strerror(err));
		end_state(r, state_path);
		undo_tracedir(r);
		return child < 0 ? 1 : err == EACCES || err == ENOEXEC ? 126 : 127;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r->old[0]) /* APP runs: the trace it replaces goes */
		file_remove_tree(r->old);
	int status = 0, rc = 1;
	double gone_at = 0;
	for (int told = 0, asked = 0;;) {
		int wst;
		pid_t p = waitpid(-1, &wst, app_gone ? WNOHANG : WUNTRACED);
		if (p == 0) { /* APP is gone, what it left behind is not */
			if (!told && now_s() - gone_at >= LEFTOVER_NOTICE_S)
				told = tell_leftovers(argv[0], status);
			int sig = leftover_sig;
			if (sig) { /* asked again: one that ignores it must not keep the recording */
				leftover_sig = 0;
				leftover_signal(asked++ ? SIGKILL : sig);
			}
			nanosleep(&(struct timespec){ 0, told ? 100000000 : 10000000 }, NULL);
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (WIFSTOPPED(wst)) {
			/* the job stops when its program does, as without the
			 * recorder; unless a SIGCONT woke the program already */
			if (p == child && is_stopped(child) == 1)
				stop_with_program(WSTOPSIG(wst));
			continue;
		}
		if (p == child) {
			status = wst;
			app_gone = 1;
			gone_at = now_s();
		}
	}
	restore_signals(&held, orig);
	char ending[128];
	describe_end(status, ending, sizeof(ending));
	const char *base = strrchr(argv[0], '/');
	if (r->state->stage[0]) /* the slots of killed threads, before their streams are ended */
		stagedir_drain(r->state->stage, state_path);
	finish_trace(r, now_s() - t0, base ? base + 1 : argv[0], ending);
	unlink(state_path);
	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = die_of(WTERMSIG(status));
	return rc;
}

static int run(int argc, char **argv)
{
	enum { OPT_TMPDIR = 256, OPT_EVENTS, OPT_LOOM, OPT_APPID, OPT_KERNEL, OPT_NO_KERNEL, OPT_FORCE };
	static const struct option longopts[] = {
		{ "tmpdir", required_argument, NULL, OPT_TMPDIR },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "loom", required_argument, NULL, OPT_LOOM },
		{ "app-id", required_argument, NULL, OPT_APPID },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	keep_user_env();
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGXFSZ, &ign, &xfsz_orig);
	sigaction(SIGPIPE, &ign, &pipe_orig);
	struct run r = { .app_id = 1 };
	const char *out = getenv("OVNI_TRACEDIR"), *tmp = getenv("OVNI_TMPDIR");
	const char *events = getenv("OVNI_EVENTS"), *loom = NULL;
	int c, kernel = -1, force = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_TMPDIR:
			tmp = optarg;
			break;
		case OPT_EVENTS:
			events = optarg;
			break;
		case OPT_LOOM:
			loom = optarg;
			break;
		case OPT_APPID:
			if (parse_app_id(optarg, &r.app_id) != 0) {
				msg_err("--app-id wants a number >= 1, not '%s'", optarg);
				return 1;
			}
			break;
		case OPT_KERNEL:
		case OPT_NO_KERNEL:
			kernel = c == OPT_KERNEL;
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case 'h':
			cmd_print_usage(&cmd_record, stdout);
			return 0;
		default:
			cmd_print_usage(&cmd_record, stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		msg_err("no program to run; `ovni record --help` explains");
		return 1;
	}
	if (events && *events) {
		if (check_events(events) != 0) {
			msg_err("--events: bad list '%s'", events);
			return 1;
		}
		setenv("OVNI_EVENTS", events, 1);
	}
	if (loom) {
		if (!*loom || strchr(loom, '/') || strlen(loom) >= sizeof(r.loom)) {
			msg_err("--loom: '%s' is not a loom name (non-empty, no '/')", loom);
			return 1;
		}
		strcpy(r.loom, loom);
	} else {
		char host[256] = "localhost";
		gethostname(host, sizeof(host) - 1);
		host[strcspn(host, ".")] = '\0';
		snprintf(r.loom, sizeof(r.loom), "%s.%ld", host, (long)getpid());
	}
	int rc = check_program(&r, argv[optind]);
	if (rc != 0)
		return rc;
	find_rank(&r);
	if (prepare_tracedir(&r, out && *out ? out : "ovni", force) != 0)
		return 1;
	if (tmp && *tmp) {
		struct stat st;
		r.tmp_made = stat(tmp, &st) != 0 && errno == ENOENT;
		if (absolute_dir(tmp, r.tmpdir) != 0) {
			undo_tracedir(&r);
			return 1;
		}
	}
	if (kernel < 0) /* the default: as --events says */
		kernel = !events || !*events || events_select(events, "kernel");
	setenv("OVNI_RECORD_KERNEL", kernel ? "1" : "0", 1);
	return launch(&r, argv + optind);
}

const struct command cmd_record = {
	.name = "record",
	.summary = "run a program and record a runtime trace of it (preloaded libovni shim)",
	.usage = usage,
	.run = run,
};
