/* ovni sync: clock offsets between the nodes of a job, measured over TCP.
 * One process per node; rank 0 listens, publishes where it listens (with a
 * random token) in a file of the shared trace directory, the other ranks
 * connect, and rank 0 runs NTP-style ping-pongs with each of them in turn.
 * The result is the offsets file the emulator reads (runtime.md 4): the
 * offset of a rank is ADDED to its clock to bring it onto rank 0's clock. */
#ifndef OVNI_SYNC_H
#define OVNI_SYNC_H

#include <stddef.h>
#include <stdint.h>

#define SYNC_HOST_MAX 64 /* bytes of a hostname, as Linux's HOST_NAME_MAX */
#define SYNC_TOKEN_LEN 32 /* random bytes; 64 hex digits in the file */
#define SYNC_RDV_NAME ".ovni-sync" /* the rendezvous file in the trace directory */
#define SYNC_WARMUP_MAX 20 /* warm-up exchanges per peer and round, discarded */
#define SYNC_SAMPLES_MAX 1000000 /* bound of -n */

struct sync_opts {
	int rank, size;
	int samples; /* exchanges measured per peer and round, after warm-up */
	int rounds; /* 1: offsets file; more: drift table, one row per round */
	double wait_s; /* seconds between drift rounds */
	double timeout_s; /* bound on every wait */
	const char *dir; /* rendezvous directory: the shared trace directory */
	const char *output; /* file written by rank 0 */
	const char *bind; /* address rank 0 listens on; NULL picks one */
	char hostname[SYNC_HOST_MAX + 1]; /* this rank's name in the output */
	int64_t skew_ns; /* test only: added to every clock reading of this rank */
	int verbose; /* rank 0 prints every sample on stdout */
};

/* Runs this rank's part. Returns 0, or -1 after a one-line message. */
int sync_run(const struct sync_opts *o);

/* This rank's place in the job: --rank and --size when given (-1 when
 * not), else the launcher's variables looked up with get (getenv in real
 * use): Open MPI, PMI (MPICH, Intel MPI), Slurm, then PMIx (which names no
 * size: --size gives it). Returns 0, or -1 after a one-line message. */
int sync_resolve_rank(const char *(*get)(const char *), int rank_opt, int size_opt, int *rank, int *size);

/* This host's name up to its first '.', as the emulator names looms.
 * Returns -1 after a message if it cannot be had. */
int sync_default_hostname(char *buf, size_t cap);

/* Checks a hostname for the output: 1..SYNC_HOST_MAX bytes, no space, no
 * '.', printable. Returns NULL when fine, else why not. */
const char *sync_hostname_problem(const char *name);

/* One NTP exchange: rank 0 sends at t1 and receives the answer at t4 (its
 * clock); the peer receives at t2 and answers at t3 (its clock). */
struct sync_sample {
	int64_t t1, t2, t3, t4;
};

/* rank 0's clock minus the peer's, at the midpoint of an exchange. */
double sync_sample_delta(const struct sync_sample *s);
/* Round trip minus the time the peer held the message. */
int64_t sync_sample_rtt(const struct sync_sample *s);

struct sync_offset {
	int64_t median; /* the offset: upper median, truncated toward zero */
	double mean, std; /* std with the n-1 divisor, 0 for one sample */
	size_t kept; /* samples used */
	int64_t rtt_max; /* largest round trip among those kept */
};

/* Keeps the tenth of the samples with the lowest round trips (at least 5,
 * or all when fewer) and summarizes their deltas. Reorders s. n > 0. */
void sync_estimate(struct sync_sample *s, size_t n, struct sync_offset *out);

/* What rank 0 publishes for the others. */
struct sync_rdv {
	char host[256]; /* address or name to connect to */
	char port[24];
	int size;
	unsigned char token[SYNC_TOKEN_LEN];
};

/* The file's text; returns its length, or 0 if it does not fit in cap. */
size_t sync_rdv_format(const struct sync_rdv *r, char *buf, size_t cap);
/* Parses the file's text. Returns NULL, or what is wrong (with the line
 * number in *line). */
const char *sync_rdv_parse(const char *text, size_t len, struct sync_rdv *r, int *line);
/* Writes dir/SYNC_RDV_NAME atomically (temporary file, mode 0600, rename).
 * Creates dir and its parents if needed. Returns -1 after a message. */
int sync_rdv_publish(const char *dir, const struct sync_rdv *r);
/* Reads dir/SYNC_RDV_NAME: 1 when read and valid, 0 when it is not there
 * (yet), -1 when it cannot be used; why says what happened (not printed). */
int sync_rdv_read(const char *dir, struct sync_rdv *r, char *why, size_t cap);
/* Removes dir/SYNC_RDV_NAME (warns if it is there and cannot be removed). */
int sync_rdv_remove(const char *dir);

/* Rank 0's listening socket: on bind_addr, or (NULL) on the address of
 * the host's name, else on every interface. Fills r->host and r->port.
 * Returns the socket, or -1 after a message. */
int sync_listen(const char *bind_addr, struct sync_rdv *r);
/* Connects to r->host:r->port before deadline (sync_now_ns time). Returns
 * the (blocking) socket, or -1 with why filled (not printed). */
int sync_connect(const struct sync_rdv *r, int64_t deadline, char *why, size_t cap);
/* TCP_NODELAY: each exchange is one small message. */
void sync_tune_socket(int fd);
/* "1.2.3.4:5" or "[::1]:5". */
struct sockaddr;
void sync_addr_name(const struct sockaddr *sa, unsigned len, char *buf, size_t cap);
/* CLOCK_MONOTONIC in ns: the recorder's clock. */
int64_t sync_now_ns(void);

/* One rank's result (clkoff.h writes the offsets file). */
struct sync_row {
	int rank;
	char host[SYNC_HOST_MAX + 1];
	struct sync_offset off;
};

/* The drift table: a header `wallclock` + one hostname per rank, then per
 * round rank 0's wall clock (seconds) and every rank's offset. offsets is
 * rounds x n, row-major. Like snprintf: writes at most cap bytes (NUL
 * included) and returns the full length. */
size_t sync_format_drift(const struct sync_row *rows, int n, int rounds, const double *wall,
	const int64_t *offsets, char *buf, size_t cap);
/* mkdir -p of the directory part of path. Returns -1 after a message. */
int sync_make_parents(const char *path);
/* Writes text to path atomically (temporary file + rename), creating the
 * parent directories. Returns -1 after a message. */
int sync_write_file(const char *path, const char *text, size_t len);

#endif
