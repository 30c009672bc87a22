/* player.c: events come out by clock, ties resolved exactly as the
 * reference's heap does (orders worked out by hand from emu.md 2.4). */
#include <stdint.h>
#include <stdlib.h>

#include "base/msg.h"
#include "trace/player.h"
#include "t.h"
#include "tstream.h"

#define MAXS 8

struct set {
	struct membuf b[MAXS];
	struct stream_reader r[MAXS];
	char names[MAXS][32];
	size_t n;
};

/* Stream i of s gets the clocks in list (terminated by -1); the MCV of
 * every event is "O" + stream letter + event number. */
static void add_stream(struct set *s, const long long *clocks)
{
	size_t i = s->n++;
	memset(&s->b[i], 0, sizeof(s->b[i]));
	mb_header(&s->b[i]);
	for (int k = 0; clocks[k] >= 0; k++) {
		char mcv[3] = { 'O', (char)('A' + i), (char)('0' + k) };
		mb_ev(&s->b[i], mcv, (uint64_t)clocks[k], NULL, 0);
	}
}

static int open_set(struct set *s, unsigned flags)
{
	for (size_t i = 0; i < s->n; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "s%c/stream.obs", (char)('A' + i));
		if (sr_open(&s->r[i], byte_src_mem(s->b[i].data, s->b[i].len, 5), s->names[i], flags) != 0)
			return -1;
	}
	return 0;
}

static void free_set(struct set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		sr_close(&s->r[i]);
		free(s->b[i].data);
	}
	s->n = 0;
}

/* Plays everything; writes "A0 C0 A1 B0" (stream letter, event number) to
 * order. Returns the last player_next result. */
static int play(struct set *s, const int64_t *offsets, unsigned flags, char *order, struct player_ev *evs, int *nev)
{
	struct player p;
	struct player_ev pe;
	int rc;
	order[0] = '\0';
	*nev = 0;
	if (player_init(&p, s->r, s->n, offsets, flags) != 0)
		return -1;
	while ((rc = player_next(&p, &pe)) == 1) {
		char tok[8];
		snprintf(tok, sizeof(tok), "%s%c%c", *order ? " " : "", pe.ev->mcv[1], pe.ev->mcv[2]);
		strcat(order, tok);
		if (evs) { /* pe.ev is the player's: valid until the next call */
			static struct ev copies[64];
			copies[*nev % 64] = *pe.ev;
			evs[*nev] = pe;
			evs[*nev].ev = &copies[*nev % 64];
		}
		(*nev)++;
	}
	player_free(&p);
	return rc;
}

static void test_ties(void)
{
	struct set s = { 0 };
	char order[256];
	int n;
	add_stream(&s, (const long long[]){ 10, 10, -1 });
	add_stream(&s, (const long long[]){ 10, -1 });
	add_stream(&s, (const long long[]){ 10, -1 });
	open_set(&s, 0);
	CHECK_INT(play(&s, NULL, 0, order, NULL, &n), 0, "equal clocks: played to the end");
	CHECK_STR(order, "A0 C0 A1 B0", "equal clocks: the order comes from heap positions");
	free_set(&s);

	add_stream(&s, (const long long[]){ 5, 7, -1 });
	add_stream(&s, (const long long[]){ 5, -1 });
	add_stream(&s, (const long long[]){ 3, 7, -1 });
	add_stream(&s, (const long long[]){ 5, -1 });
	open_set(&s, 0);
	play(&s, NULL, 0, order, NULL, &n);
	CHECK_STR(order, "C0 D0 B0 A0 C1 A1", "four streams: ties follow heap positions, not stream order");
	free_set(&s);
}

static void test_clocks(void)
{
	struct set s = { 0 };
	char order[256];
	struct player_ev evs[8];
	int n;
	add_stream(&s, (const long long[]){ 10, -1 });
	add_stream(&s, (const long long[]){ 50, 120, -1 });
	open_set(&s, 0);
	int64_t offsets[2] = { 100, 0 };
	play(&s, offsets, 0, order, evs, &n);
	CHECK_STR(order, "B0 A0 B1", "offsets are added before merging");
	CHECK(n == 3 && evs[1].stream == 0 && evs[1].dclock == 60 && evs[0].dclock == 0 && evs[2].dclock == 70,
	      "dclock has the offset and counts from the first event");
	CHECK(n == 3 && evs[2].ev->offset == STREAM_HEADER_SIZE + 12, "events keep their stream offset");
	free_set(&s);
}

static void test_backwards(void)
{
	struct set s = { 0 };
	char order[256];
	int n;
	add_stream(&s, (const long long[]){ 10, 30, 20, -1 });
	add_stream(&s, (const long long[]){ 25, -1 });
	open_set(&s, SR_UNSORTED | SR_QUIET);
	cap_begin();
	int rc = play(&s, NULL, 0, order, NULL, &n);
	const char *err = cap_end();
	CHECK(rc == -1 && n == 3, "a global backwards jump stops a sorted player");
	show(CHECK(count_lines(err) == 1 &&
		   strstr(err, "sA/stream.obs: offset 32: event OA2 at clock 20 goes back in time from 30"),
		   "the error names stream, offset and both clocks"), err);
	free_set(&s);

	add_stream(&s, (const long long[]){ 10, 30, 20, -1 });
	add_stream(&s, (const long long[]){ 25, -1 });
	open_set(&s, SR_UNSORTED | SR_QUIET);
	cap_begin();
	rc = play(&s, NULL, PLAYER_UNSORTED, order, NULL, &n);
	err = cap_end();
	CHECK(rc == 0, "an unsorted player goes on");
	CHECK_STR(order, "A0 B0 A1 A2", "an unsorted player plays every event");
	show(CHECK(count_lines(err) == 1 && strstr(err, "warning: sA/stream.obs: offset 32: event OA2: backwards jump in time 30 -> 20"),
		   "the jump is reported as a warning"), err);
	free_set(&s);
}

static void test_edges(void)
{
	struct set s = { 0 };
	struct player p;
	struct player_ev pe;
	add_stream(&s, (const long long[]){ -1 });
	add_stream(&s, (const long long[]){ 7, -1 });
	open_set(&s, 0);
	CHECK_INT(player_init(&p, s.r, s.n, NULL, 0), 0, "a stream without events is fine");
	CHECK(player_first(&p, 0) == NULL, "player_first: NULL for an empty stream");
	CHECK(player_first(&p, 1) && player_first(&p, 1)->clock == 7, "player_first: the first event");
	CHECK(player_next(&p, &pe) == 1 && pe.stream == 1 && player_next(&p, &pe) == 0,
	      "only the events of the non-empty stream are played");
	player_free(&p);
	free_set(&s);

	CHECK(player_init(&p, NULL, 0, NULL, 0) == 0 && player_next(&p, &pe) == 0, "no streams: nothing to play");
	player_free(&p);

	/* A stream whose second event is cut: the error surfaces on the step
	 * that advances it, after its first event was played. */
	add_stream(&s, (const long long[]){ 1, 2, -1 });
	add_stream(&s, (const long long[]){ 3, -1 });
	s.b[0].len -= 1;
	open_set(&s, 0);
	char order[64];
	int n;
	cap_begin();
	int rc = play(&s, NULL, 0, order, NULL, &n);
	const char *err = cap_end();
	show(CHECK(rc == -1 && n == 1 && strstr(err, "sA/stream.obs: offset 20: event OA1 cut at the end of the file"),
		   "a stream error stops the player"), err);
	free_set(&s);
}

/* Many streams with random sorted clocks and frequent ties: every event
 * once, in clock order, each stream in its own order. */
static void test_random(void)
{
	struct set s = { 0 };
	long long clocks[MAXS][200];
	srand(42);
	for (int i = 0; i < MAXS; i++) {
		long long c = rand() % 5;
		int n = rand() % 199;
		for (int k = 0; k < n; k++) {
			clocks[i][k] = c;
			c += rand() % 3;
		}
		clocks[i][n] = -1;
		add_stream(&s, clocks[i]);
	}
	open_set(&s, 0);
	struct player p;
	struct player_ev pe;
	int next[MAXS] = { 0 };
	int ok = player_init(&p, s.r, s.n, NULL, 0) == 0;
	int64_t last = -1;
	int sorted = 1, each = 1;
	while (ok && player_next(&p, &pe) == 1) {
		sorted &= pe.dclock >= last;
		last = pe.dclock;
		each &= clocks[pe.stream][next[pe.stream]++] == (int64_t)pe.ev->clock;
	}
	for (int i = 0; i < MAXS; i++)
		each &= clocks[i][next[i]] == -1;
	CHECK(ok && sorted, "random streams: events come out in clock order");
	CHECK(ok && each, "random streams: every event once, in stream order");
	player_free(&p);
	free_set(&s);
}

/* The reference's heap, on plain arrays: 1-based (clock, stream). */
struct ref_heap {
	long long c[MAXS + 1];
	int s[MAXS + 1];
	int size;
};

static void ref_push(struct ref_heap *h, long long c, int st)
{
	int k = ++h->size;
	for (; k > 1 && c < h->c[k / 2]; k /= 2) {
		h->c[k] = h->c[k / 2];
		h->s[k] = h->s[k / 2];
	}
	h->c[k] = c;
	h->s[k] = st;
}

static int ref_pop(struct ref_heap *h)
{
	int top = h->s[1], n = --h->size, k = 1;
	long long lc = h->c[n + 1];
	int ls = h->s[n + 1];
	for (;;) {
		int m = 2 * k;
		if (m > n)
			break;
		m += m < n && h->c[m + 1] < h->c[m];
		if (!(h->c[m] < lc))
			break;
		h->c[k] = h->c[m];
		h->s[k] = h->s[m];
		k = m;
	}
	h->c[k] = lc;
	h->s[k] = ls;
	return top;
}

/* Tie-heavy streams, with runs where one stream stays below the rest: the
 * order must be the reference heap's step for step (push the previous
 * stream, then pop). Guards shortcuts: "still below the top, play it
 * again" without the push + pop rotates equal clocks and fails here. */
static void test_heap_order(void)
{
	int bad = 0;
	srand(7);
	for (int trial = 0; trial < 400; trial++) {
		struct set s = { 0 };
		long long clocks[MAXS][60];
		int ns = 1 + trial % MAXS;
		struct ref_heap h = { .size = 0 };
		int next[MAXS];
		for (int i = 0; i < ns; i++) {
			long long c = rand() % 3;
			int n = rand() % 60;
			for (int k = 0; k < n; k++) {
				clocks[i][k] = c;
				c += (rand() % 4 == 0) ? rand() % 6 : rand() % 2;
			}
			clocks[i][n] = -1;
			add_stream(&s, clocks[i]);
			if (n > 0)
				ref_push(&h, clocks[i][0], i);
			next[i] = n > 0;
		}
		open_set(&s, 0);
		struct player p;
		struct player_ev pe;
		int ok = player_init(&p, s.r, s.n, NULL, 0) == 0, prev = -1;
		for (;;) {
			if (prev >= 0 && clocks[prev][next[prev]] >= 0) {
				ref_push(&h, clocks[prev][next[prev]], prev);
				next[prev]++;
			}
			int r = ok ? player_next(&p, &pe) : -1;
			if (h.size == 0) {
				ok &= r == 0;
				break;
			}
			prev = ref_pop(&h);
			if (r != 1 || (int)pe.stream != prev || pe.ev->mcv[2] != '0' + next[prev] - 1) {
				ok = 0;
				break;
			}
		}
		bad += !ok;
		player_free(&p);
		free_set(&s);
	}
	CHECK_INT(bad, 0, "tie-heavy random sets: same order as the reference heap");
}

int main(void)
{
	msg_set_prog("test");
	test_ties();
	test_clocks();
	test_backwards();
	test_edges();
	test_random();
	test_heap_order();
	return t_done();
}
