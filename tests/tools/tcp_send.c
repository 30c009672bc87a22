/* tcp_send HOST PORT [HOLD_MS]: connects, sends standard input, waits
 * HOLD_MS (default 0), closes its sending side and copies whatever comes
 * back to standard output (for at most 5 s). Tests use it to talk to
 * `ovni sync` like a stranger would. */
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: tcp_send HOST PORT [HOLD_MS] < DATA\n");
		return 2;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int e = getaddrinfo(argv[1], argv[2], &hints, &res);
	if (e != 0) {
		fprintf(stderr, "tcp_send: %s: %s\n", argv[1], gai_strerror(e));
		return 1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		perror("tcp_send: connect");
		return 1;
	}
	freeaddrinfo(res);
	char buf[4096];
	ssize_t n;
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
			break;
	long hold = argc == 4 ? atol(argv[3]) : 0;
	struct timespec ts = { .tv_sec = hold / 1000, .tv_nsec = (hold % 1000) * 1000000 };
	nanosleep(&ts, NULL);
	shutdown(fd, SHUT_WR);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	while (poll(&p, 1, 5000) > 0 && (n = recv(fd, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return 0;
}
