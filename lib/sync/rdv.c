/* ovni sync: how the ranks find rank 0. Rank 0 listens on an ephemeral TCP
 * port and publishes host, port, job size and a random token in a file of
 * the shared trace directory; the others poll for that file and connect. */
#include "sync/sync.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"

#define RDV_MAGIC "ovni-sync 1"

int64_t sync_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

size_t sync_rdv_format(const struct sync_rdv *r, char *buf, size_t cap)
{
	char hex[2 * SYNC_TOKEN_LEN + 1];
	for (int i = 0; i < SYNC_TOKEN_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", r->token[i]);
	int n = snprintf(buf, cap, RDV_MAGIC "\nhost %s\nport %s\nsize %d\ntoken %s\n",
		r->host, r->port, r->size, hex);
	return n < 0 ? 0 : (size_t)n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Copies the value of line "key value" into dst; NULL if the key differs. */
static const char *field(const char *line, size_t n, const char *key, char *dst, size_t cap)
{
	size_t k = strlen(key);
	if (n <= k + 1 || memcmp(line, key, k) != 0 || line[k] != ' ')
		return "expected a line \"KEY VALUE\"";
	if (n - k - 1 >= cap)
		return "value too long";
	memcpy(dst, line + k + 1, n - k - 1);
	dst[n - k - 1] = '\0';
	for (char *p = dst; *p; p++)
		if (*p <= ' ' || *p > '~')
			return "value has a blank or unprintable byte";
	return NULL;
}

static const char *parse_line(int i, const char *line, size_t n, struct sync_rdv *r)
{
	static const char *const keys[] = { NULL, "host", "port", "size", "token" };
	char v[256];
	if (i == 0)
		return n == strlen(RDV_MAGIC) && memcmp(line, RDV_MAGIC, n) == 0 ? NULL :
			"not an ovni sync rendezvous file (first line is not \"" RDV_MAGIC "\")";
	if (i > 4)
		return "unexpected line after the token";
	const char *why = field(line, n, keys[i], v, sizeof(v));
	if (why)
		return why;
	char *end;
	long x;
	switch (i) {
	case 1:
		memcpy(r->host, v, strlen(v) + 1);
		return NULL;
	case 2:
	case 3:
		errno = 0;
		x = strtol(v, &end, 10);
		if (*end || errno || x < 1 || (i == 2 && x > 65535) || (i == 3 && x > 1000000))
			return i == 2 ? "port is not a number in 1..65535" : "size is not a number in 1..1000000";
		if (i == 2)
			snprintf(r->port, sizeof(r->port), "%ld", x);
		else
			r->size = (int)x;
		return NULL;
	default:
		if (strlen(v) != 2 * SYNC_TOKEN_LEN)
			return "token is not 64 hex digits";
		for (int j = 0; j < SYNC_TOKEN_LEN; j++) {
			int hi = hexval(v[2 * j]), lo = hexval(v[2 * j + 1]);
			if (hi < 0 || lo < 0)
				return "token is not 64 hex digits";
			r->token[j] = (unsigned char)(hi << 4 | lo);
		}
		return NULL;
	}
}

const char *sync_rdv_parse(const char *text, size_t len, struct sync_rdv *r, int *line)
{
	memset(r, 0, sizeof(*r));
	size_t pos = 0;
	int i = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		*line = i + 1;
		if (!nl)
			return "last line has no newline";
		const char *why = parse_line(i, text + pos, (size_t)(nl - text - pos), r);
		if (why)
			return why;
		pos = (size_t)(nl - text) + 1;
		i++;
	}
	*line = i + 1;
	return i == 5 ? NULL : "file ends before the token";
}

static char *rdv_path(const char *dir)
{
	size_t n = strlen(dir);
	char *p = malloc(n + sizeof("/" SYNC_RDV_NAME));
	if (!p) {
		msg_err("%s: out of memory", dir);
		return NULL;
	}
	memcpy(p, dir, n);
	memcpy(p + n, "/" SYNC_RDV_NAME, sizeof("/" SYNC_RDV_NAME));
	return p;
}

int sync_rdv_publish(const char *dir, const struct sync_rdv *r)
{
	char text[512];
	size_t len = sync_rdv_format(r, text, sizeof(text));
	if (len == 0 || len >= sizeof(text)) {
		msg_err("%s: rendezvous address too long", r->host);
		return -1;
	}
	char *path = rdv_path(dir);
	if (!path)
		return -1;
	if (sync_make_parents(path) != 0) {
		free(path);
		return -1;
	}
	/* Mode 0600: the token is a secret between the ranks of one user. */
	int rc = file_write_atomic(path, text, len, 0600);
	if (rc != 0)
		msg_err("%s: cannot write the rendezvous file: %s", path, strerror(errno));
	free(path);
	return rc;
}

int sync_rdv_read(const char *dir, struct sync_rdv *r, char *why, size_t cap)
{
	char *path = rdv_path(dir);
	if (!path) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		snprintf(why, cap, "%s: %s", path, strerror(e));
		free(path);
		return e == ENOENT ? 0 : -1;
	}
	char text[1024];
	ssize_t n = read(fd, text, sizeof(text));
	int e = errno;
	close(fd);
	int line = 0;
	const char *bad = NULL;
	if (n < 0)
		snprintf(why, cap, "%s: cannot read: %s", path, strerror(e));
	else if (n == (ssize_t)sizeof(text))
		snprintf(why, cap, "%s: too long for a rendezvous file", path);
	else if ((bad = sync_rdv_parse(text, (size_t)n, r, &line)))
		snprintf(why, cap, "%s: line %d: %s", path, line, bad);
	free(path);
	return n >= 0 && n < (ssize_t)sizeof(text) && !bad ? 1 : -1;
}

int sync_rdv_remove(const char *dir)
{
	char *path = rdv_path(dir);
	if (!path)
		return -1;
	int rc = unlink(path);
	if (rc != 0 && errno != ENOENT)
		msg_warn("%s: cannot remove the rendezvous file: %s", path, strerror(errno));
	free(path);
	return rc;
}

void sync_addr_name(const struct sockaddr *sa, unsigned len, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN + 1], serv[16];
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		/* An IPv4 peer of a dual-stack socket: name it as IPv4. */
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = s6->sin6_port };
		memcpy(&s4.sin_addr, s6->sin6_addr.s6_addr + 12, 4);
		sync_addr_name((const struct sockaddr *)&s4, sizeof(s4), buf, cap);
		return;
	}
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(buf, cap, "(unknown address)");
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, cap, "[%s]:%s", host, serv);
	else
		snprintf(buf, cap, "%s:%s", host, serv);
}

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) ||
			(IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 1;
}

/* A listening socket on sa; -1 with errno on failure. */
static int listen_on(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int off = 0;
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, sa, len) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int port_of(int fd, struct sync_rdv *r)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return -1;
	unsigned port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) :
		ntohs(((struct sockaddr_in *)&ss)->sin_port);
	snprintf(r->port, sizeof(r->port), "%u", port);
	return 0;
}

/* Listens on the address ADDR names (the first one that works). */
static int listen_bind(const char *addr, struct sync_rdv *r)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res, *ai;
	int e = getaddrinfo(addr, "0", &hints, &res);
	if (e != 0) {
		msg_err("--bind %s: %s", addr, gai_strerror(e));
		return -1;
	}
	int fd = -1, err = 0;
	for (ai = res; ai && fd < 0; ai = ai->ai_next)
		if ((fd = listen_on(ai->ai_addr, ai->ai_addrlen)) < 0)
			err = errno;
	freeaddrinfo(res);
	if (fd < 0) {
		msg_err("--bind %s: cannot listen there: %s", addr, strerror(err));
		return -1;
	}
	snprintf(r->host, sizeof(r->host), "%s", addr);
	return fd;
}

/* The host's own name resolves to a reachable address: listen there. Else
 * listen on every interface and let the others resolve the name. */
static int listen_default(struct sync_rdv *r)
{
	char name[256];
	if (gethostname(name, sizeof(name) - 1) != 0)
		name[0] = '\0';
	name[sizeof(name) - 1] = '\0';
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	int fd = -1;
	if (name[0] && getaddrinfo(name, "0", &hints, &res) == 0) {
		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			if (is_loopback(ai->ai_addr) || (fd = listen_on(ai->ai_addr, ai->ai_addrlen)) < 0)
				continue;
			char serv[16];
			if (getnameinfo(ai->ai_addr, ai->ai_addrlen, r->host, sizeof(r->host), serv,
				    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
				snprintf(r->host, sizeof(r->host), "%s", name);
		}
		freeaddrinfo(res);
	}
	if (fd >= 0)
		return fd;
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	fd = listen_on((struct sockaddr *)&any6, sizeof(any6));
	if (fd < 0)
		fd = listen_on((struct sockaddr *)&any4, sizeof(any4));
	if (fd < 0) {
		msg_err("cannot listen on any TCP address: %s", strerror(errno));
		return -1;
	}
	snprintf(r->host, sizeof(r->host), "%s", name[0] ? name : "localhost");
	return fd;
}

int sync_listen(const char *bind_addr, struct sync_rdv *r)
{
	int fd = bind_addr ? listen_bind(bind_addr, r) : listen_default(r);
	if (fd >= 0 && port_of(fd, r) != 0) {
		msg_err("cannot learn the port the sync socket listens on: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* connect() bounded by deadline; -1 with errno (ETIMEDOUT at the deadline). */
static int connect_until(const struct addrinfo *ai, int64_t deadline)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	while (rc != 0 && (errno == EINPROGRESS || errno == EINTR)) {
		int64_t left = (deadline - sync_now_ns()) / 1000000;
		if (left <= 0) {
			errno = ETIMEDOUT;
			break;
		}
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int n = poll(&p, 1, left > 1000 ? 1000 : (int)left);
		if (n <= 0)
			continue;
		int err = 0;
		socklen_t len = sizeof(err);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		errno = err;
		rc = err ? -1 : 0;
		if (err == EINPROGRESS)
			rc = -1;
	}
	if (rc != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int sync_connect(const struct sync_rdv *r, int64_t deadline, char *why, size_t cap)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res, *ai;
	int e = getaddrinfo(r->host, r->port, &hints, &res);
	if (e != 0) {
		snprintf(why, cap, "cannot resolve %s: %s", r->host, gai_strerror(e));
		return -1;
	}
	int fd = -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next)
		if ((fd = connect_until(ai, deadline)) < 0)
			snprintf(why, cap, "cannot connect to %s port %s: %s", r->host, r->port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

void sync_tune_socket(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}
