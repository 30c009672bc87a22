/* ovni sync: the protocol. Rank 0 gathers the others (each presents the
 * token), then measures them one at a time with ping-pongs, and writes the
 * offsets. Every wait is bounded by the timeout. */
#include "sync/sync.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "trace/clkoff.h"
#include "base/file.h"
#include "base/msg.h"

/* The hello a rank sends after connecting: magic, version, rank, size,
 * token, hostname, machine tag. */
#define HELLO_MAGIC "OVNISYNC"
#define PROTO_VERSION 2
#define HELLO_LEN (8 + 4 + 4 + 4 + SYNC_TOKEN_LEN + SYNC_HOST_MAX + 4)
/* Rank 0's frames: type, 3 bytes of the CPU it runs on plus 1 (0: unknown),
 * u32 text length, u64 argument (of an accept: rank 0's machine tag), text. */
#define FRAME_LEN 16
#define TEXT_MAX 255
/* A peer's answer to a ping: sequence number, receive time, send time, the
 * CPU it runs on plus 1 (u32), 4 zero bytes. */
#define PONG_LEN 32
/* Connections still in their hello; more are dropped at once. */
#define PENDING_MAX 64
/* How often a rank looks for the rendezvous file. */
#define POLL_MS 50
/* How long a rank spins for the next message before it sleeps. */
#define SPIN_NS 10000000

enum frame_type {
	FRAME_ACCEPT = 'A',
	FRAME_REFUSE = 'R',
	FRAME_PING = 'P',
	FRAME_REST = 'W', /* no pings for a while: stop spinning */
	FRAME_DONE = 'D',
	FRAME_ABORT = 'X',
};

static void put_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (56 - 8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* This rank's clock: the recorder's, shifted by the test-only skew. */
static int64_t clock_ns(const struct sync_opts *o)
{
	return sync_now_ns() + o->skew_ns;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Later receives on fd give up after s seconds (EAGAIN). */
static void set_recv_timeout(int fd, double s)
{
	if (s < 0.001)
		s = 0.001;
	if (s > (double)INT_MAX)
		s = (double)INT_MAX;
	struct timeval tv = { .tv_sec = (time_t)s, .tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6) };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Returns 0 when n bytes came, 1 at end of file, -1 with errno (EAGAIN
 * when the receive timeout passed). */
static int recv_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Where the other end of a connection runs, for the choice of how to spin:
 * its machine tag (0: unknown) and the CPU it last said it runs on, plus 1
 * (0: unknown). */
struct whereabouts {
	uint32_t tag;
	uint32_t cpu;
};

/* This machine's tag: the first 32 bits of its boot id, a random UUID (two
 * ranks with the same tag share CPUs); 0 if it cannot be read. */
static uint32_t machine_tag(void)
{
	static uint32_t tag;
	static int known;
	if (known)
		return tag;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	if (file_read_all("/proc/sys/kernel/random/boot_id", &buf, &cap, &len) == 0 && len >= 8) {
		char hex[9];
		memcpy(hex, buf, 8);
		hex[8] = '\0';
		char *end;
		unsigned long v = strtoul(hex, &end, 16);
		tag = *end ? 0 : (uint32_t)v;
	}
	free(buf);
	known = 1;
	return tag;
}

/* The CPU this process runs on now, plus 1 (0: unknown). */
static uint32_t cpu_now(void)
{
	int c = sched_getcpu();
	return c >= 0 && c < 0xffffff ? (uint32_t)c + 1 : 0;
}

/* Whether a rank waiting for w should yield its CPU at every turn: only
 * when w may be waiting for this very CPU. Else a yield hands the CPU to a
 * busy process for a time slice while w answers (rounds 2 ms off beside
 * CPU hogs). */
static int share_cpu(const struct whereabouts *w)
{
	if (!w || !w->tag || w->tag != machine_tag())
		return 0;
	uint32_t mine = cpu_now();
	return !mine || !w->cpu || mine == w->cpu;
}

/* Bytes 1..3 of a frame: the CPU the sender runs on, plus 1. */
static void put_frame_cpu(unsigned char *f)
{
	uint32_t cpu = cpu_now();
	f[1] = (unsigned char)(cpu >> 16);
	f[2] = (unsigned char)(cpu >> 8);
	f[3] = (unsigned char)cpu;
}

/* recv_all, but first spins for up to spin_ns: waking a sleeping process
 * costs tens of microseconds, and not the same in both directions, which
 * would bias the offsets. It yields at every turn when the sender may
 * share its CPU (peer NULL: never). */
static int recv_spin(int fd, void *buf, size_t n, int64_t spin_ns, const struct whereabouts *peer)
{
	char *p = buf;
	int64_t end = sync_now_ns() + spin_ns;
	int yield = share_cpu(peer);
	while (n > 0) {
		ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
		if (r == 0)
			return 1;
		if (r > 0) {
			p += r;
			n -= (size_t)r;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (sync_now_ns() >= end)
			return recv_all(fd, p, n);
		if (yield)
			sched_yield();
	}
	return 0;
}

static int send_frame(int fd, enum frame_type type, uint64_t arg, const char *text)
{
	unsigned char f[FRAME_LEN + TEXT_MAX] = { (unsigned char)type };
	put_frame_cpu(f);
	size_t len = text ? strlen(text) : 0;
	if (len > TEXT_MAX)
		len = TEXT_MAX;
	put_u32(f + 4, (uint32_t)len);
	put_u64(f + 8, arg);
	if (len)
		memcpy(f + FRAME_LEN, text, len);
	return send_all(fd, f, FRAME_LEN + len);
}

/* What went wrong in a receive, for messages. */
static const char *recv_problem(int rc, int err)
{
	if (rc == 1)
		return "closed the connection";
	if (err == EAGAIN || err == EWOULDBLOCK)
		return "did not answer in time";
	return strerror(err);
}

/* Rank 0's view of a rank. */
struct peer {
	int fd; /* -1 until it arrives */
	char host[SYNC_HOST_MAX + 1];
	char addr[64];
	struct whereabouts at;
};

/* A connection whose hello is not complete yet. */
struct pending {
	int fd;
	char addr[64];
	unsigned char buf[HELLO_LEN];
	size_t got;
};

struct gather {
	const struct sync_opts *o;
	const unsigned char *token;
	struct peer *peers;
	int arrived;
	struct pending pend[PENDING_MAX];
	int npend;
};

static void drop_pending(struct gather *g, int i)
{
	close(g->pend[i].fd);
	g->pend[i] = g->pend[--g->npend];
}

/* Garbage is shown as text, unprintable bytes as '.'. */
static void printable(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = p[i] >= ' ' && p[i] <= '~' && p[i] != '"' ? (char)p[i] : '.';
	out[n] = '\0';
}

static int token_equal(const unsigned char *a, const unsigned char *b)
{
	unsigned char diff = 0; /* no early exit: timing tells nothing */
	for (int i = 0; i < SYNC_TOKEN_LEN; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

/* Why a complete hello is refused, or NULL. Fills rank and host. */
static const char *judge_hello(struct gather *g, const unsigned char *h, int *rank, char *host, char *why, size_t cap)
{
	uint32_t version = get_u32(h + 8), r = get_u32(h + 12), size = get_u32(h + 16);
	memcpy(host, h + 20 + SYNC_TOKEN_LEN, SYNC_HOST_MAX);
	host[SYNC_HOST_MAX] = '\0';
	*rank = r < (uint32_t)INT_MAX ? (int)r : -1;
	if (version != PROTO_VERSION)
		snprintf(why, cap, "speaks sync protocol version %u, not %d", version, PROTO_VERSION);
	else if (!token_equal(h + 20, g->token))
		snprintf(why, cap, "wrong token");
	else if (size != (uint32_t)g->o->size)
		snprintf(why, cap, "says the job has %u ranks, rank 0 says %d", size, g->o->size);
	else if (r == 0 || r >= size)
		snprintf(why, cap, "says it is rank %u, not one of 1..%d", r, g->o->size - 1);
	else if (g->peers[r].fd >= 0)
		snprintf(why, cap, "says it is rank %u, which already arrived from %s", r, g->peers[r].addr);
	else if (sync_hostname_problem(host))
		snprintf(why, cap, "bad hostname: %s", sync_hostname_problem(host));
	else
		return NULL;
	return why;
}

static void take_hello(struct gather *g, int i)
{
	struct pending *p = &g->pend[i];
	char host[SYNC_HOST_MAX + 1], why[160];
	int rank;
	if (judge_hello(g, p->buf, &rank, host, why, sizeof(why))) {
		char who[SYNC_HOST_MAX + 48] = "";
		if (get_u32(p->buf + 8) == PROTO_VERSION) { /* its claims can be read: show them */
			char shown[SYNC_HOST_MAX + 1];
			printable((unsigned char *)host, strlen(host), shown);
			snprintf(who, sizeof(who), " (rank %d, host %s)", rank, shown);
		}
		msg_err("connection from %s%s: %s; dropped", p->addr, who, why);
		send_frame(p->fd, FRAME_REFUSE, 0, why);
		drop_pending(g, i);
		return;
	}
	int fd = p->fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	sync_tune_socket(fd);
	set_recv_timeout(fd, g->o->timeout_s);
	struct peer *peer = &g->peers[rank];
	snprintf(peer->addr, sizeof(peer->addr), "%s", p->addr);
	snprintf(peer->host, sizeof(peer->host), "%s", host);
	peer->at.tag = get_u32(p->buf + 20 + SYNC_TOKEN_LEN + SYNC_HOST_MAX);
	g->npend--;
	g->pend[i] = g->pend[g->npend];
	if (send_frame(fd, FRAME_ACCEPT, machine_tag(), NULL) != 0) {
		msg_err("rank %d (%s, host %s): %s; dropped", rank, peer->addr, host, strerror(errno));
		close(fd);
		return;
	}
	peer->fd = fd;
	g->arrived++;
}

/* Reads what a handshaking connection has sent; judges it when complete. */
static void read_pending(struct gather *g, int i)
{
	struct pending *p = &g->pend[i];
	ssize_t r = recv(p->fd, p->buf + p->got, HELLO_LEN - p->got, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r <= 0) {
		if (r < 0)
			msg_err("connection from %s: %s; dropped", p->addr, strerror(errno));
		else
			msg_err("connection from %s: closed after %zu bytes, before a complete hello; dropped",
				p->addr, p->got);
		drop_pending(g, i);
		return;
	}
	size_t before = p->got;
	p->got += (size_t)r;
	size_t m = p->got < 8 ? p->got : 8;
	if (before < 8 && memcmp(p->buf, HELLO_MAGIC, m) != 0) {
		char shown[17];
		size_t n = p->got < 16 ? p->got : 16;
		printable(p->buf, n, shown);
		msg_err("connection from %s: not an ovni sync hello (it starts with \"%s\"); dropped", p->addr, shown);
		drop_pending(g, i);
		return;
	}
	if (p->got == HELLO_LEN)
		take_hello(g, i);
}

static void accept_one(struct gather *g, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return; /* the peer gave up already, or a transient error: it will retry */
	char addr[64];
	sync_addr_name((struct sockaddr *)&ss, len, addr, sizeof(addr));
	if (g->npend == PENDING_MAX) {
		msg_err("connection from %s: %d others are still in their hello; dropped", addr, PENDING_MAX);
		close(fd);
		return;
	}
	struct pending *p = &g->pend[g->npend++];
	p->fd = fd;
	p->got = 0;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
}

/* "ranks 2, 3 and 5" (the first few). */
static void missing_ranks(const struct gather *g, char *buf, size_t cap)
{
	int n = g->o->size - g->arrived, shown = 0;
	size_t len = (size_t)snprintf(buf, cap, "%s", n == 1 ? "rank" : "ranks");
	for (int r = 1; r < g->o->size && shown < 8 && len < cap; r++) {
		if (g->peers[r].fd >= 0)
			continue;
		const char *sep = shown == 0 ? " " : shown == n - 1 ? " and " : ", ";
		len += (size_t)snprintf(buf + len, cap - len, "%s%d", sep, r);
		shown++;
	}
	if (shown < n && len < cap)
		snprintf(buf + len, cap - len, " and %d more", n - shown);
}

/* Waits until every rank presented the token, or the deadline. */
static int gather(struct gather *g, int lfd, int64_t deadline)
{
	while (g->arrived < g->o->size) {
		int64_t left = (deadline - sync_now_ns()) / 1000000;
		if (left <= 0)
			break;
		struct pollfd pfd[1 + PENDING_MAX];
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < g->npend; i++)
			pfd[1 + i] = (struct pollfd){ .fd = g->pend[i].fd, .events = POLLIN };
		int npfd = 1 + g->npend;
		if (poll(pfd, (nfds_t)npfd, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		/* Backwards: reading may drop a pending entry (moving the last one). */
		for (int i = npfd - 2; i >= 0; i--)
			if (pfd[1 + i].revents)
				read_pending(g, i);
		if (pfd[0].revents & POLLIN)
			accept_one(g, lfd);
	}
	for (int i = g->npend - 1; i >= 0; i--) {
		msg_warn("connection from %s: no complete hello (%zu of %d bytes); dropped",
			g->pend[i].addr, g->pend[i].got, HELLO_LEN);
		drop_pending(g, i);
	}
	if (g->arrived == g->o->size)
		return 0;
	char which[160], text[TEXT_MAX + 1];
	missing_ranks(g, which, sizeof(which));
	snprintf(text, sizeof(text), "%s of %d never arrived within %g s (same trace directory %s on every node?)",
		which, g->o->size, g->o->timeout_s, g->o->dir);
	msg_err("%s", text);
	for (int r = 1; r < g->o->size; r++)
		if (g->peers[r].fd >= 0)
			send_frame(g->peers[r].fd, FRAME_ABORT, 0, text);
	return -1;
}

/* One exchange with a peer; fills s. */
static int ping(const struct sync_opts *o, struct peer *p, int rank, uint64_t seq, struct sync_sample *s)
{
	unsigned char f[FRAME_LEN] = { FRAME_PING }, a[PONG_LEN];
	put_frame_cpu(f);
	put_u64(f + 8, seq);
	s->t1 = clock_ns(o);
	int rc = send_all(p->fd, f, sizeof(f));
	if (rc == 0)
		rc = recv_spin(p->fd, a, sizeof(a), SPIN_NS, &p->at);
	s->t4 = clock_ns(o);
	if (rc != 0) {
		msg_err("rank %d (host %s, %s): %s during ping %llu", rank, p->host, p->addr,
			recv_problem(rc, errno), (unsigned long long)seq);
		return -1;
	}
	if (get_u64(a) != seq) {
		msg_err("rank %d (host %s, %s): answered ping %llu to ping %llu", rank, p->host, p->addr,
			(unsigned long long)get_u64(a), (unsigned long long)seq);
		return -1;
	}
	s->t2 = (int64_t)get_u64(a + 8);
	s->t3 = (int64_t)get_u64(a + 16);
	p->at.cpu = get_u32(a + 24);
	return 0;
}

static void print_sample(int rank, int i, const struct sync_sample *s)
{
	double ref = ((double)s->t1 + (double)s->t4) / 2, cur = ((double)s->t2 + (double)s->t3) / 2;
	printf("rank=%d  sample=%d  delta=%f  ref=%f  cur=%f\n", rank, i, sync_sample_delta(s), ref, cur);
}

/* Warm-up, then o->samples exchanges with rank r. */
static int measure(const struct sync_opts *o, struct peer *p, int r, struct sync_sample *s, struct sync_offset *off)
{
	int warm = o->samples < SYNC_WARMUP_MAX ? o->samples : SYNC_WARMUP_MAX;
	struct sync_sample w;
	for (int i = 0; i < warm; i++)
		if (ping(o, p, r, (uint64_t)i, &w) != 0)
			return -1;
	for (int i = 0; i < o->samples; i++) {
		if (ping(o, p, r, (uint64_t)(warm + i), &s[i]) != 0)
			return -1;
		if (o->verbose)
			print_sample(r, i, &s[i]);
	}
	/* Only the rank being measured may spin: others would steal its CPU. */
	if (send_frame(p->fd, FRAME_REST, 0, NULL) != 0) {
		msg_err("rank %d (host %s, %s): %s", r, p->host, p->addr, strerror(errno));
		return -1;
	}
	sync_estimate(s, (size_t)o->samples, off);
	return 0;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The offsets file through clkoff's writer (the emulator's own layout),
 * into memory first: sync_write_file replaces the file atomically. */
static char *offsets_text(const struct sync_opts *o, const struct sync_row *rows, size_t *len)
{
	struct clkoff_entry *e = calloc((size_t)o->size, sizeof(*e));
	char *text = NULL;
	FILE *f = e ? open_memstream(&text, len) : NULL;
	if (!f) {
		free(e);
		return NULL;
	}
	for (int r = 0; r < o->size; r++)
		e[r] = (struct clkoff_entry){ .rank = rows[r].rank, .hostname = rows[r].host,
			.median = rows[r].off.median, .mean = rows[r].off.mean, .std = rows[r].off.std };
	int rc = clkoff_format(f, e, (size_t)o->size);
	if (fclose(f) != 0 || rc != 0) {
		free(text);
		text = NULL;
	}
	free(e);
	return text;
}

static char *drift_text(const struct sync_opts *o, const struct sync_row *rows, const double *wall,
	const int64_t *offs, size_t *len)
{
	*len = sync_format_drift(rows, o->size, o->rounds, wall, offs, NULL, 0);
	char *text = malloc(*len + 1);
	if (text)
		sync_format_drift(rows, o->size, o->rounds, wall, offs, text, *len + 1);
	return text;
}

static int write_result(const struct sync_opts *o, const struct sync_row *rows, const double *wall,
	const int64_t *offs)
{
	size_t len = 0;
	char *text = o->rounds > 1 ? drift_text(o, rows, wall, offs, &len) : offsets_text(o, rows, &len);
	if (!text) {
		msg_err("%s: out of memory", o->output);
		return -1;
	}
	int rc = sync_write_file(o->output, text, len);
	free(text);
	return rc;
}

/* Every round measures every rank; the last round's figures go to rows. */
static int measure_all(const struct sync_opts *o, struct peer *peers, struct sync_row *rows, double *wall, int64_t *offs)
{
	struct sync_sample *s = malloc((size_t)o->samples * sizeof(*s));
	if (!s) {
		msg_err("out of memory for %d samples", o->samples);
		return -1;
	}
	int rc = 0;
	for (int k = 0; k < o->rounds && rc == 0; k++) {
		if (k > 0)
			sleep_s(o->wait_s);
		for (int r = 1; r < o->size && rc == 0; r++)
			rc = measure(o, &peers[r], r, s, &rows[r].off);
		wall[k] = wall_s();
		for (int r = 0; r < o->size; r++)
			offs[(size_t)k * (size_t)o->size + (size_t)r] = rows[r].off.median;
	}
	free(s);
	return rc;
}

static void say_result(const struct sync_opts *o, const struct sync_row *rows)
{
	if (o->size == 1) {
		msg_info("one rank, nothing to measure; wrote %s", o->output);
		return;
	}
	double worst = 0;
	int64_t rtt = 0;
	for (int r = 1; r < o->size; r++) {
		if (rows[r].off.std > worst)
			worst = rows[r].off.std;
		if (rows[r].off.rtt_max > rtt)
			rtt = rows[r].off.rtt_max;
	}
	msg_info("%d ranks, %d samples each: largest std %.0f ns, round trips up to %lld ns; wrote %s",
		o->size, o->samples, worst, (long long)rtt, o->output);
}

static int rank0_run(const struct sync_opts *o, struct peer *peers, int lfd, const unsigned char *token,
	struct sync_row *rows, double *wall, int64_t *offs)
{
	struct gather g = { .o = o, .token = token, .peers = peers, .arrived = 1 };
	int rc = gather(&g, lfd, sync_now_ns() + (int64_t)(o->timeout_s * 1e9));
	sync_rdv_remove(o->dir);
	close(lfd);
	if (rc != 0)
		return -1;
	for (int r = 1; r < o->size; r++)
		snprintf(rows[r].host, sizeof(rows[r].host), "%s", peers[r].host);
	if (measure_all(o, peers, rows, wall, offs) != 0)
		rc = -1;
	if (rc == 0)
		rc = write_result(o, rows, wall, offs);
	const char *why = rc == 0 ? NULL : "rank 0 failed; see its messages";
	for (int r = 1; r < o->size; r++)
		send_frame(peers[r].fd, why ? FRAME_ABORT : FRAME_DONE, 0, why);
	if (rc == 0)
		say_result(o, rows);
	return rc;
}

static int rank0(const struct sync_opts *o)
{
	int n = o->size;
	struct peer *peers = calloc((size_t)n, sizeof(*peers));
	struct sync_row *rows = calloc((size_t)n, sizeof(*rows));
	double *wall = calloc((size_t)o->rounds, sizeof(*wall));
	int64_t *offs = calloc((size_t)o->rounds * (size_t)n, sizeof(*offs));
	int rc = -1, lfd = -1;
	if (!peers || !rows || !wall || !offs) {
		msg_err("out of memory for %d ranks", n);
		goto out;
	}
	for (int r = 0; r < n; r++) {
		peers[r].fd = -1;
		rows[r].rank = r;
	}
	snprintf(rows[0].host, sizeof(rows[0].host), "%s", o->hostname);
	struct sync_rdv rdv = { .size = n };
	if (getrandom(rdv.token, sizeof(rdv.token), 0) != (ssize_t)sizeof(rdv.token)) {
		msg_err("cannot get random bytes for the token: %s", strerror(errno));
		goto out;
	}
	if (n > 1) {
		if ((lfd = sync_listen(o->bind, &rdv)) < 0)
			goto out;
		if (sync_rdv_publish(o->dir, &rdv) != 0) {
			close(lfd);
			goto out;
		}
	}
	rc = n > 1 ? rank0_run(o, peers, lfd, rdv.token, rows, wall, offs) : measure_all(o, peers, rows, wall, offs);
	if (n == 1 && rc == 0 && (rc = write_result(o, rows, wall, offs)) == 0)
		say_result(o, rows);
out:
	if (peers)
		for (int r = 1; r < n; r++)
			if (peers[r].fd >= 0)
				close(peers[r].fd);
	free(peers);
	free(rows);
	free(wall);
	free(offs);
	return rc;
}

static void make_hello(const struct sync_opts *o, const struct sync_rdv *r, unsigned char *h)
{
	memset(h, 0, HELLO_LEN);
	memcpy(h, HELLO_MAGIC, 8);
	put_u32(h + 8, PROTO_VERSION);
	put_u32(h + 12, (uint32_t)o->rank);
	put_u32(h + 16, (uint32_t)o->size);
	memcpy(h + 20, r->token, SYNC_TOKEN_LEN);
	memcpy(h + 20 + SYNC_TOKEN_LEN, o->hostname, strlen(o->hostname));
	put_u32(h + 20 + SYNC_TOKEN_LEN + SYNC_HOST_MAX, machine_tag());
}

/* Reads a frame and its text (NUL-terminated), spinning first for spin_ns
 * (never yielding when from is NULL); the sender's CPU goes to from->cpu. */
static int recv_frame(int fd, unsigned char *f, char *text, int64_t spin_ns, struct whereabouts *from)
{
	int rc = recv_spin(fd, f, FRAME_LEN, spin_ns, from);
	if (rc != 0)
		return rc;
	if (from)
		from->cpu = (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 | f[3];
	uint32_t len = get_u32(f + 4);
	if (len > TEXT_MAX) {
		errno = EPROTO;
		return -1;
	}
	rc = recv_all(fd, text, len);
	text[len] = '\0';
	return rc;
}

/* Presents the token; 1 when accepted (*tag: rank 0's machine tag), 0 to
 * try again, -1 when refused. */
static int hello(const struct sync_opts *o, const struct sync_rdv *r, int fd, int64_t deadline, uint32_t *tag,
	char *why, size_t cap)
{
	unsigned char h[HELLO_LEN], f[FRAME_LEN];
	char text[TEXT_MAX + 1];
	make_hello(o, r, h);
	set_recv_timeout(fd, (double)(deadline - sync_now_ns()) * 1e-9);
	int rc = send_all(fd, h, sizeof(h));
	if (rc == 0)
		rc = recv_frame(fd, f, text, 0, NULL);
	if (rc != 0) {
		snprintf(why, cap, "rank 0 at %s port %s %s after our hello", r->host, r->port, recv_problem(rc, errno));
		return 0;
	}
	if (f[0] == FRAME_ACCEPT) {
		*tag = (uint32_t)get_u64(f + 8);
		return 1;
	}
	if (f[0] == FRAME_REFUSE)
		snprintf(why, cap, "rank 0 at %s port %s refused us: %s", r->host, r->port, text);
	else
		snprintf(why, cap, "rank 0 at %s port %s answered our hello with frame type %u", r->host, r->port, f[0]);
	return -1;
}

/* A refusal may come from a new rank 0 that reuses the port of the one in
 * a stale file we read just before it was replaced. */
static int token_replaced(const struct sync_opts *o, const struct sync_rdv *used)
{
	struct sync_rdv now;
	char why[1024];
	return sync_rdv_read(o->dir, &now, why, sizeof(why)) == 1 &&
		memcmp(now.token, used->token, SYNC_TOKEN_LEN) != 0;
}

/* Finds rank 0 through the rendezvous file and gets accepted (*tag: rank
 * 0's machine tag). A stale file (from an earlier run) just makes us look
 * again until the deadline. */
static int join(const struct sync_opts *o, int64_t deadline, uint32_t *tag)
{
	char why[1024] = "";
	int seen = 0;
	for (;; sleep_ms(POLL_MS)) {
		if (sync_now_ns() >= deadline) {
			if (!seen)
				msg_err("rank 0 did not publish %s/%s within %g s (is it running, with the same trace directory?)",
					o->dir, SYNC_RDV_NAME, o->timeout_s);
			else
				msg_err("rank %d: no contact with rank 0 within %g s: %s", o->rank, o->timeout_s, why);
			return -1;
		}
		struct sync_rdv r;
		int st = sync_rdv_read(o->dir, &r, why, sizeof(why));
		if (st == 0)
			continue;
		seen = 1;
		if (st < 0)
			continue;
		if (r.size != o->size) {
			snprintf(why, sizeof(why), "%s/%s says the job has %d ranks, we have %d", o->dir, SYNC_RDV_NAME,
				r.size, o->size);
			continue;
		}
		int fd = sync_connect(&r, deadline, why, sizeof(why));
		if (fd < 0)
			continue;
		sync_tune_socket(fd);
		int ok = hello(o, &r, fd, deadline, tag, why, sizeof(why));
		if (ok > 0)
			return fd;
		close(fd);
		if (ok < 0 && !token_replaced(o, &r)) {
			msg_err("%s", why);
			return -1;
		}
	}
}

/* Answers rank 0's pings until it says done. */
static int serve(const struct sync_opts *o, int fd, struct whereabouts *rank0)
{
	/* Rank 0 may wait a whole timeout for others, then measure, then sleep. */
	set_recv_timeout(fd, 2 * o->timeout_s + o->wait_s + 10);
	unsigned char f[FRAME_LEN], a[PONG_LEN];
	char text[TEXT_MAX + 1];
	int64_t spin = 0;
	for (;;) {
		int rc = recv_frame(fd, f, text, spin, rank0);
		int64_t t2 = clock_ns(o);
		if (rc != 0) {
			msg_err("rank %d: rank 0 %s", o->rank, recv_problem(rc, errno));
			return -1;
		}
		switch (f[0]) {
		case FRAME_PING:
			memcpy(a, f + 8, 8);
			put_u64(a + 8, (uint64_t)t2);
			put_u64(a + 16, (uint64_t)clock_ns(o));
			put_u32(a + 24, cpu_now());
			put_u32(a + 28, 0);
			if (send_all(fd, a, sizeof(a)) != 0) {
				msg_err("rank %d: cannot answer rank 0: %s", o->rank, strerror(errno));
				return -1;
			}
			spin = SPIN_NS;
			break;
		case FRAME_REST:
			spin = 0;
			break;
		case FRAME_DONE:
			return 0;
		case FRAME_ABORT:
			msg_err("rank %d: rank 0 gave up: %s", o->rank, text);
			return -1;
		default:
			msg_err("rank %d: rank 0 sent frame type %u", o->rank, f[0]);
			return -1;
		}
	}
}

int sync_run(const struct sync_opts *o)
{
	if (o->rank == 0)
		return rank0(o);
	struct whereabouts rank0 = { 0, 0 };
	int fd = join(o, sync_now_ns() + (int64_t)(o->timeout_s * 1e9), &rank0.tag);
	if (fd < 0)
		return -1;
	int rc = serve(o, fd, &rank0);
	close(fd);
	return rc;
}

const char *sync_hostname_problem(const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return "it is empty";
	if (n > SYNC_HOST_MAX)
		return "it is longer than 64 bytes";
	for (size_t i = 0; i < n; i++) {
		if (name[i] == '.')
			return "it has a '.' (the emulator matches a loom's name up to its first '.')";
		if (name[i] <= ' ' || name[i] > '~')
			return "it has a blank or unprintable byte";
	}
	return NULL;
}

int sync_default_hostname(char *buf, size_t cap)
{
	char name[256];
	if (gethostname(name, sizeof(name) - 1) != 0) {
		msg_err("cannot get the hostname: %s; give --hostname NAME", strerror(errno));
		return -1;
	}
	name[sizeof(name) - 1] = '\0';
	char *dot = strchr(name, '.');
	if (dot)
		*dot = '\0';
	const char *why = sync_hostname_problem(name);
	if (why || strlen(name) >= cap) {
		msg_err("hostname '%s' cannot name this node in the offsets file: %s; give --hostname NAME", name,
			why ? why : "too long");
		return -1;
	}
	memcpy(buf, name, strlen(name) + 1);
	return 0;
}

/* Launchers and the variables that give a process its rank and the size. */
static const struct {
	const char *rank, *size;
} launchers[] = {
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
	{ "PMI_RANK", "PMI_SIZE" },
	{ "SLURM_PROCID", "SLURM_NTASKS" },
	{ "PMIX_RANK", NULL },
};

/* A decimal in [lo, 1000000]; -1 if v is not one. */
static int parse_count(const char *v, int lo)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (end == v || *end || errno || x < lo || x > 1000000)
		return -1;
	return (int)x;
}

int sync_resolve_rank(const char *(*get)(const char *), int rank_opt, int size_opt, int *rank, int *size)
{
	if (rank_opt >= 0 && size_opt < 0) {
		msg_err("--rank needs --size");
		return -1;
	}
	*rank = rank_opt;
	*size = size_opt;
	const char *rvar = "--rank", *svar = "--size";
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]) && *rank < 0; i++) {
		const char *rv = get(launchers[i].rank);
		if (!rv)
			continue;
		rvar = launchers[i].rank;
		if ((*rank = parse_count(rv, 0)) < 0) {
			msg_err("%s='%s' is not a rank", rvar, rv);
			return -1;
		}
		const char *sv = launchers[i].size ? get(launchers[i].size) : NULL;
		if (size_opt >= 0)
			break;
		if (!sv) {
			msg_err("%s gives the rank but %s; give --size N", rvar,
				launchers[i].size ? "its size variable is not set" : "no variable gives the job size");
			return -1;
		}
		svar = launchers[i].size;
		if ((*size = parse_count(sv, 1)) < 0) {
			msg_err("%s='%s' is not a job size", svar, sv);
			return -1;
		}
	}
	if (*rank < 0) {
		msg_err("no rank: run one process per node under srun, mpirun or mpiexec, or give --rank R --size N");
		return -1;
	}
	if (*rank >= *size) {
		msg_err("rank %d (%s) is not below the job size %d (%s)", *rank, rvar, *size, svar);
		return -1;
	}
	return 0;
}
