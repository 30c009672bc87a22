/* A stream's staging file: under `ovni record`, when the recorder has a
 * memory file system (tmpfs) for it, a thread emits into a ring of two
 * slots of a mapped file there, and the shim's mapper thread copies each
 * filled slot into stream.obs with pwrite. Mapping the stream's own pages
 * on a disk file system costs four times the CPU of that copy (a page
 * fault, block reservation and zeroing per page). The ring's pages are
 * reused, so they cost nothing after the first lap. A thread killed before
 * its last slots were copied (SIGKILL, a process that exited under it)
 * leaves its staging file: the recorder copies it into the stream
 * (stage_replay) before it repairs the stream. Named DEV.INO of stream.obs
 * in the recording's staging directory; removed once copied. */
#ifndef OVNI_TRACE_STAGE_H
#define OVNI_TRACE_STAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define STAGE_MAGIC "OVNISTG1"
#define STAGE_TMPFS_MAGIC 0x01021994 /* statfs f_type of tmpfs, where staging files live */
#define STAGE_SLOTS 2
/* A slot's address space: the largest event (2 MiB) after a partial page */
#define STAGE_SLOT_SPAN (4u << 20)
/* A slot is left when this much of it is filled (the pages of both slots
 * are all a thread keeps, like libovni's buffer) */
#define STAGE_SLOT_FILL (1u << 20)
#define STAGE_HEAD_SIZE 4096u
#define STAGE_FILE_SIZE (STAGE_HEAD_SIZE + (uint64_t)STAGE_SLOTS * STAGE_SLOT_SPAN)

enum { STAGE_FREE, STAGE_HELD };

/* A slot holds the stream's bytes from off on, len of them (the slot being
 * filled: up to its events' end, which the stream's reader finds) while
 * state is STAGE_HELD. */
struct stage_slot {
	_Atomic uint32_t state;
	uint32_t unused;
	_Atomic uint64_t off, len;
	uint64_t ready; /* bytes of the slot with pages allocated (the shim's) */
};

struct stage_head {
	char magic[8];
	uint64_t dev, ino; /* of the stream.obs */
	struct stage_slot slot[STAGE_SLOTS];
	char path[3072]; /* of the stream.obs, NUL-terminated */
	char owner[768]; /* the recording's state file (lib/record/state.h) */
};

_Static_assert(sizeof(struct stage_head) <= STAGE_HEAD_SIZE, "the head fits in its page");

/* The staging file's name for a stream.obs: DEV.INO into name (64 bytes). */
void stage_name(char name[64], uint64_t dev, uint64_t ino);

/* The staging file fd mapped (STAGE_FILE_SIZE bytes), its head whole; NULL
 * when it holds nothing yet (errno 0: made, never written) or is not one
 * (errno EINVAL, or another). */
const struct stage_head *stage_map(int fd);
void stage_unmap(const struct stage_head *h);

/* The held slots of h into order, lower offsets first (where two share a
 * page, the later one is the newer); how many. */
int stage_held(const struct stage_head *h, int order[STAGE_SLOTS]);
/* Slot i's length (at most its span) and bytes. */
size_t stage_slot_len(const struct stage_head *h, int i);
const uint8_t *stage_slot_bytes(const struct stage_head *h, int i);

/* Writes the held slots of h into dst, in stream order; the bytes after
 * the events of the slot being filled are cut by the stream's repair.
 * System calls only (the shim calls it too). 0, or -1 with errno. */
int stage_copy(const struct stage_head *h, int dst);

/* stage_copy of the staging file fd into its own stream.obs, when that is
 * still the same file (else -1 with errno ESTALE). 0 also when it holds
 * nothing. */
int stage_replay_fd(int fd);

/* Readers (staged.c, not in the shim). */

/* The staging directory of this user on this node, /dev/shm/ovni-stage.UID
 * or else $XDG_RUNTIME_DIR/ovni-stage, on a memory file system, into out
 * (n bytes): 0, or -1 when there is none (then streams are written through
 * their own mapped pages). Made (mode 0700) when make is set; checked to
 * be this user's private directory either way. */
int stage_dir(char *out, size_t n, int make);

/* The staging file of the stream file whose status is st, opened
 * read-only, its path in path (n bytes); -1 when there is none. */
struct stat;
int stage_open_for(const struct stat *st, char *path, size_t n);

/* A stream's bytes from offset from on, with what its staging file holds:
 * whole events only, up to the last one. */
struct stage_tail {
	uint64_t from;
	uint8_t *bytes; /* malloc'd */
	size_t n;
};
/* The tail of the stream open as fd (status st) and its staging file h:
 * 1 with t filled, 0 when h holds nothing for it, -1 with errno. */
int stage_compose(int fd, const struct stat *st, const struct stage_head *h, struct stage_tail *t);

/* stage_compose of the stream open as fd (status st) with its staging
 * file, whose path goes into staged (n bytes): 1 with t filled, 0 when
 * there is none or it holds nothing for the stream, -1 with errno. */
int stage_tail_for(int fd, const struct stat *st, char *staged, size_t n, struct stage_tail *t);
/* file (a byte_src over the unfinished stream obs) with the events its
 * staging file still holds after them, up to its last whole event, which
 * are read from offset *from on; file itself when there is no staging
 * file for it (staged is set to its path when there is, n bytes). The
 * returned source owns file. */
struct byte_src;
struct byte_src *stage_overlay(const char *obs, struct byte_src *file, char *staged, size_t n, uint64_t *from);

#endif
