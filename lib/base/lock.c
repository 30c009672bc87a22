#include "base/lock.h"

#include <errno.h>
#include <sys/file.h>

#include "base/msg.h"

void lock_file(int fd, int op, const char *path, const char *why)
{
	if (flock(fd, op | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		return;
	msg_warn("%s: %s; waiting for it to end", path, why); /* a quiet command too: else it seems to hang */
	while (flock(fd, op) != 0 && errno == EINTR)
		;
}

void lock_for_reading(int fd, const char *path)
{
	lock_file(fd, LOCK_SH, path, "another ovni command is rewriting it");
}
