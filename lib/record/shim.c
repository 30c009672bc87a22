/* Installing the shim the binary carries (mk/blob.S) where the dynamic linker can load
 * it, without trusting anything another user could have placed there. */
#include "record/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/file.h"
#include "base/msg.h"


static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* A directory we own, only we can change, and reached without a symlink.
 * Mode 0711: a program that drops to another user (su, setpriv, a daemon)
 * still loads the shim in what it runs then; no one else can list it. */
static int open_own_dir(int at, const char *name, const char *shown)
{
	if (mkdirat(at, name, 0711) != 0 && errno != EEXIST) {
		msg_err("cannot create %s: %s", shown, strerror(errno));
		return -1;
	}
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		msg_err("cannot open %s: %s (a symlink or not a directory?)", shown, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 022) != 0) {
		msg_err("%s: not a private directory of this user (owner %u, mode %o); refusing to use it",
			shown, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != 0711)
		fchmod(fd, 0711); /* made 0700 by an older ovni, or under a umask */
	return fd;
}

/* A directory the dynamic linker can map code from (not mounted noexec)
 * and whose path LD_PRELOAD can hold (no space or colon). */
static int usable_parent(const char *dir)
{
	struct statvfs sv;
	if (!dir || *dir != '/' || strpbrk(dir, " :") || access(dir, W_OK | X_OK) != 0)
		return 0;
	return statvfs(dir, &sv) == 0 && !(sv.f_flag & ST_NOEXEC);
}

int shim_private_dir(char *path, size_t n)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *tmp = getenv("TMPDIR");
	const char *home = getenv("HOME");
	char cache[4096] = "";
	int len = -1;
	if (home && *home == '/')
		snprintf(cache, sizeof(cache), "%s/.cache", home);
	if (!tmp || *tmp != '/')
		tmp = "/tmp";
	/* root's runtime directory is 0700: the users it drops to cannot
	 * reach a shim there */
	if (geteuid() != 0 && usable_parent(xdg))
		len = snprintf(path, n, "%s/ovni", xdg);
	else if (usable_parent(tmp))
		len = snprintf(path, n, "%s/ovni-%u", tmp, (unsigned)getuid());
	else if ((mkdir(cache, 0700) == 0 || errno == EEXIST) && usable_parent(cache))
		len = snprintf(path, n, "%s/ovni", cache);
	if (len < 0) {
		msg_err("no directory to put the shim in: $XDG_RUNTIME_DIR, $TMPDIR (or /tmp) and ~/.cache are missing, noexec or not writable");
		return -1;
	}
	if ((size_t)len >= n) {
		msg_err("private directory path too long");
		return -1;
	}
	return open_own_dir(AT_FDCWD, path, path);
}

static int same_content(int dirfd, const char *name, const unsigned char *data, size_t n)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	int same = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == n;
	unsigned char buf[65536];
	for (size_t off = 0; same && off < n;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r <= 0 || (size_t)r > n - off || memcmp(buf, data + off, (size_t)r) != 0)
			same = 0;
		else
			off += (size_t)r;
	}
	close(fd);
	return same;
}

/* Writes name in dirfd atomically (a unique file beside it, renamed over). */
static int put_file(int dirfd, const char *name, const char *shown, const unsigned char *data, size_t n, mode_t mode)
{
	if (file_write_atomic_at(dirfd, name, data, n, mode, 1) == 0)
		return 0;
	msg_err("cannot write %s: %s", shown, strerror(errno));
	return -1;
}

int shim_install(const struct shim_blob *b, char *dir, size_t n)
{
	char base[4096];
	int bfd = shim_private_dir(base, sizeof(base));
	if (bfd < 0)
		return -1;
	char name[64];
	snprintf(name, sizeof(name), "shim-%016llx", (unsigned long long)fnv1a(b->so, b->so_len));
	if (file_join_to(dir, n, base, name) >= n) {
		close(bfd);
		msg_err("private directory path too long");
		return -1;
	}
	int dfd = open_own_dir(bfd, name, dir);
	close(bfd);
	if (dfd < 0)
		return -1;
	int rc = 0;
	if (!same_content(dfd, "libovni.so.1", b->so, b->so_len))
		rc = put_file(dfd, "libovni.so.1", dir, b->so, b->so_len, 0755);
	close(dfd);
	return rc;
}

int shim_write_lib(const struct shim_blob *b, const char *dir)
{
	if (file_mkdirs(dir, 0) != 0) {
		msg_err("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		msg_err("cannot open %s: %s", dir, strerror(errno));
		return -1;
	}
	char abs[4096], pc[8192];
	if (!realpath(dir, abs)) {
		msg_err("%s: %s", dir, strerror(errno));
		close(dfd);
		return -1;
	}
	int pclen = snprintf(pc, sizeof(pc),
			     "prefix=%s\nlibdir=${prefix}\nincludedir=${prefix}\n\n"
			     "Name: ovni\nDescription: libovni 1.x API (the ovni record shim)\n"
			     "Version: 1.14.0\nLibs: -L${libdir} -Wl,-rpath,${libdir} -lovni\n"
			     "Cflags: -I${includedir}\n",
			     abs);
	int rc = -1;
	if (pclen > 0 && (size_t)pclen < sizeof(pc) &&
	    put_file(dfd, "ovni.h", "ovni.h", b->hdr, b->hdr_len, 0644) == 0 &&
	    put_file(dfd, "libovni.so.1", "libovni.so.1", b->so, b->so_len, 0755) == 0 &&
	    put_file(dfd, "ovni.pc", "ovni.pc", (const unsigned char *)pc, (size_t)pclen, 0644) == 0) {
		unlinkat(dfd, "libovni.so", 0);
		if (symlinkat("libovni.so.1", dfd, "libovni.so") == 0)
			rc = 0;
		else
			msg_err("cannot create %s/libovni.so: %s", dir, strerror(errno));
	}
	close(dfd);
	return rc;
}
