/* stage.c / staged.c: what a staging file holds goes back into its stream
 * in stream order, whole events only, up to the last one. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/event.h"
#include "trace/stage.h"
#include "trace/stream.h"
#include "t.h"

#define NEV 2000 /* 12-byte events: about 24 KB */

static char dir[256], obs[300], stg[300];
static uint8_t image[STREAM_HEADER_SIZE + NEV * EV_HEADER_SIZE];
static const size_t total = sizeof(image);

static void make_image(void)
{
	stream_header(image);
	for (size_t i = 0; i < NEV; i++)
		ev_encode(image + STREAM_HEADER_SIZE + i * EV_HEADER_SIZE, "OB.", 100 + i, NULL, 0);
}

/* stream.obs holding the image's first n bytes */
static void write_stream(size_t n)
{
	int fd = open(obs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, image, n) == (ssize_t)n, "stream.obs written (%zu bytes)", n);
	close(fd);
}

/* A staging file for stream.obs: slot i, when off[i] != UINT64_MAX, holds
 * the image from off[i] for len[i] bytes (the rest of the image, then 4
 * zeros and stale bytes, when len[i] runs past its end). */
static void write_stage(const uint64_t off[STAGE_SLOTS], const uint64_t len[STAGE_SLOTS], int same_file)
{
	struct stat st;
	stat(obs, &st);
	int fd = open(stg, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)STAGE_FILE_SIZE) == 0, "staging file made");
	uint8_t *m = mmap(NULL, STAGE_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	struct stage_head *h = (struct stage_head *)m;
	h->dev = (uint64_t)st.st_dev;
	h->ino = (uint64_t)st.st_ino + (same_file ? 0 : 1);
	snprintf(h->path, sizeof(h->path), "%s", obs);
	snprintf(h->owner, sizeof(h->owner), "%s/run.1", dir);
	for (int i = 0; i < STAGE_SLOTS; i++) {
		if (off[i] == UINT64_MAX)
			continue;
		uint8_t *slot = m + STAGE_HEAD_SIZE + (size_t)i * STAGE_SLOT_SPAN;
		memset(slot, 0xab, (size_t)len[i]); /* stale bytes of an earlier lap */
		size_t have = off[i] + len[i] <= total ? (size_t)len[i] : total - (size_t)off[i];
		memcpy(slot, image + off[i], have);
		if (have < len[i])
			memset(slot + have, 0, 4);
		atomic_store(&h->slot[i].off, off[i]);
		atomic_store(&h->slot[i].len, len[i]);
		atomic_store(&h->slot[i].state, STAGE_HELD);
	}
	memcpy(h->magic, STAGE_MAGIC, 8);
	munmap(m, STAGE_FILE_SIZE);
}

/* n stale bytes at offset at of slot i of the staging file. */
static void scribble(int i, size_t at, size_t n)
{
	int fd = open(stg, O_RDWR);
	uint8_t *m = mmap(NULL, STAGE_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	memset(m + STAGE_HEAD_SIZE + (size_t)i * STAGE_SLOT_SPAN + at, 0xcd, n);
	munmap(m, STAGE_FILE_SIZE);
}

/* The stream and staging file composed: from, and whether the bytes are
 * the image's from there to its end. */
static int compose(uint64_t *from, int *exact)
{
	int fd = open(obs, O_RDONLY), sfd = open(stg, O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	const struct stage_head *h = stage_map(sfd);
	struct stage_tail t = { 0 };
	int r = h ? stage_compose(fd, &st, h, &t) : -2;
	*from = t.from;
	*exact = r == 1 && t.from + t.n == total && memcmp(t.bytes, image + t.from, t.n) == 0;
	free(t.bytes);
	if (h)
		stage_unmap(h);
	close(fd);
	close(sfd);
	return r;
}

static int stream_is_image(void)
{
	int fd = open(obs, O_RDONLY);
	uint8_t *b = malloc(total);
	ssize_t n = read(fd, b, total);
	close(fd);
	int same = n == (ssize_t)total && memcmp(b, image, total) == 0;
	free(b);
	return same;
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ovni-test-stage.%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(obs, sizeof(obs), "%s/stream.obs", dir);
	snprintf(stg, sizeof(stg), "%s/stage", dir);
	make_image();

	/* written up to 8192 (mid-event); a slot being written holds one page
	 * from there, the slot being filled the rest from 12288 on */
	write_stream(8192);
	uint64_t off[2] = { 8192, 12288 }, len[2] = { 4096, STAGE_SLOT_FILL };
	write_stage(off, len, 1);
	uint64_t from;
	int exact;
	CHECK_INT(compose(&from, &exact), 1, "two held slots: composed");
	CHECK_INT(from, 8192 - (8192 - STREAM_HEADER_SIZE) % EV_HEADER_SIZE,
		  "from the event that crosses the first slot's start");
	CHECK(exact, "the events to the last one, not the zeros and stale bytes after it");

	/* the slot being filled shares its first page with the other (a
	 * partial page goes on in the next slot): the later one wins */
	uint64_t off2[2] = { 12288, 8192 }, len2[2] = { STAGE_SLOT_FILL, 4096 + 100 };
	write_stage(off2, len2, 1);
	scribble(1, 4096, 100); /* the page the slot being filled took over */
	CHECK_INT(compose(&from, &exact), 1, "slots in either order");
	CHECK(exact, "they are laid out by offset, the later slot over the earlier");

	/* nothing written yet: the header is staged too */
	write_stream(0);
	uint64_t off3[2] = { 0, UINT64_MAX }, len3[2] = { 32768, 0 };
	write_stage(off3, len3, 1);
	CHECK_INT(compose(&from, &exact), 1, "an empty stream file");
	CHECK(from == 0 && exact, "its header and events come from the slot");

	/* stage_replay_fd writes the slots into the stream itself */
	int sfd = open(stg, O_RDONLY);
	CHECK_INT(stage_replay_fd(sfd), 0, "replayed into its stream");
	close(sfd);
	int fd = open(obs, O_RDWR);
	CHECK(ftruncate(fd, (off_t)total) == 0, "cut at the image's end");
	close(fd);
	CHECK(stream_is_image(), "the stream holds the image");

	/* nothing held, or another stream's staging file: nothing composed */
	write_stream(8192);
	uint64_t none[2] = { UINT64_MAX, UINT64_MAX };
	write_stage(none, len, 1);
	CHECK_INT(compose(&from, &exact), 0, "no held slot: nothing");
	write_stage(off, len, 0);
	CHECK_INT(compose(&from, &exact), 0, "another file's staging file: nothing");
	sfd = open(stg, O_RDONLY);
	CHECK(stage_replay_fd(sfd) == -1, "and no replay into a stream that is not its own");
	close(sfd);

	/* a staging file as it is made: empty, then without its magic */
	fd = open(stg, O_RDWR | O_TRUNC);
	CHECK(stage_map(fd) == NULL, "an empty staging file maps to nothing");
	CHECK(ftruncate(fd, (off_t)STAGE_FILE_SIZE) == 0 && stage_map(fd) == NULL && errno == 0,
	      "nor one without its head yet, and that is no error");
	close(fd);

	unlink(obs);
	unlink(stg);
	rmdir(dir);
	return t_done();
}
