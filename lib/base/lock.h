/* Advisory locks between ovni commands on one trace: `ovni sort` holds an
 * exclusive lock on a stream while it rewrites it in place, every output
 * (out_create) one while it is written, and readers a shared one while
 * they read a file, so no one reads a file half rewritten. */
#ifndef OVNI_BASE_LOCK_H
#define OVNI_BASE_LOCK_H

/* flock(fd, op), op LOCK_SH or LOCK_EX, held until fd is closed. While
 * another process holds a lock in the way, warns "PATH: WHY; waiting for it
 * to end" once (quiet commands too) and waits. Where the file system has
 * no flock (Lustre without -o flock), goes on without the lock. */
void lock_file(int fd, int op, const char *path, const char *why);
/* The readers' lock: shared, waiting while another ovni command (a sort, an
 * emulation writing its timelines) rewrites the file. */
void lock_for_reading(int fd, const char *path);

#endif
