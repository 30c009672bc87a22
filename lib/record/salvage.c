#include "record/salvage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "base/lock.h"
#include "base/msg.h"
#include "base/json.h"
#include "record/stagedir.h"
#include "trace/blockmark.h"
#include "trace/events.h"
#include "trace/kspill.h"
#include "trace/stream.h"
#include "trace/trace.h"
#include "trace/versions.h"

/* What the scan of a stream found. */
struct scan {
	uint64_t events, end, last_clock;
	char thread; /* last OH value: 0 none, 'x' 'e' 'p' 'r' 'c' 'w' */
	int kernel_out; /* last kernel event was KCO */
	int unordered; /* inside OU[ ... OU]: clocks may go back (--kernel) */
	uint64_t last_kco; /* clock of the last KCO */
	uint64_t last_k; /* clock of the last KCO or KCI */
	uint64_t models[4]; /* the model ids (first MCV byte) seen, as bits */
	int blocked; /* a push onto mark 99: ovni record's waits */
};

static void model_seen(uint64_t models[4], uint8_t id)
{
	models[id >> 6] |= 1ull << (id & 63);
}

/* Walks whole events from the header; stops at the first byte that cannot
 * start one: the zero bytes the shim keeps after the last event, or a torn
 * write. */
static void scan(const uint8_t *p, uint64_t size, struct scan *s)
{
	memset(s, 0, sizeof(*s));
	struct ev_walk w;
	ev_walk_init(&w, p, size);
	const uint8_t *e;
	while ((e = ev_walk_next(&w))) {
		s->events++;
		model_seen(s->models, e[1]);
		if (!s->blocked && blockmark_is_push(e))
			s->blocked = 1;
		if (e[1] == 'O' && e[2] == 'H')
			s->thread = (char)e[3];
		else if (e[1] == 'K' && e[2] == 'C') {
			s->kernel_out = e[3] == 'O';
			s->last_k = ev_clock(e);
		}
		if (e[1] == 'K' && e[2] == 'C' && e[3] == 'O')
			s->last_kco = ev_clock(e);
	}
	s->end = w.off;
	s->last_clock = w.last_clock;
	s->unordered = w.unordered;
}

/* The count entries of the kswitch.spill in dir (trace/kspill.h), mapped
 * (*size bytes; NULL when there is none, or it is not one). */
static const uint64_t *spill_map(const char *dir, size_t *count, size_t *size)
{
	char path[4200];
	struct stat st;
	struct kspill_head h;
	const uint64_t *e = NULL;
	*count = *size = 0;
	int fd = file_join_to(path, sizeof(path), dir, KSPILL_NAME) < sizeof(path) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size > sizeof(h) &&
	    pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && memcmp(h.magic, KSPILL_MAGIC, sizeof(h.magic)) == 0) {
		uint64_t max = ((uint64_t)st.st_size - sizeof(h)) / 8;
		void *m = h.count ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
		if (m != MAP_FAILED) {
			e = (const uint64_t *)((const struct kspill_head *)m + 1);
			*count = (size_t)(h.count < max ? h.count : max);
			*size = (size_t)st.st_size;
		}
	}
	close(fd);
	return e;
}

/* The switches the shim collected and had not yet written when the thread
 * died (kswitch.spill): those after the stream's last, by kspill_switch
 * as the shim's drains, in an unordered region left open for
 * closing_events, which then ends the thread at the last switch if that
 * is later than its last event. *buf is malloc'd (NULL: none, also when
 * memory runs out: a warning says so, the stream is ended without them). */
static void spill_events(const char *dir, struct scan *s, uint8_t **buf, size_t *len, uint64_t *count)
{
	size_t n, size;
	*buf = NULL;
	*len = 0;
	*count = 0;
	const uint64_t *e = spill_map(dir, &n, &size);
	if (!e)
		return;
	size_t from = 0; /* past the switches a drain cut by the kill had written */
	uint64_t top = s->last_clock;
	for (size_t i = 0; i < n; i++) {
		if (e[i] & KSPILL_LOST)
			continue;
		if (KSPILL_VALUE(e[i]) <= s->last_k)
			from = i + 1;
		else if (KSPILL_VALUE(e[i]) >= top)
			top = KSPILL_VALUE(e[i]) + 1; /* room for a made-up KCI after a last KCO */
	}
	uint8_t *p = from < n ? malloc((2 * (n - from) + 1) * EV_HEADER_SIZE) : NULL;
	if (from < n && !p) { /* the stream can still be ended without them */
		munmap((void *)((const struct kspill_head *)e - 1), size);
		msg_warn("%s: the %zu context switches in %s are left out: out of memory", dir, n - from, KSPILL_NAME);
		return;
	}
	size_t at = 0;
	int opened = s->unordered;
	for (size_t i = from; i < n; i++) {
		int out;
		uint64_t clock;
		if (!kspill_switch(e[i], s->kernel_out, s->last_kco, &out, &clock))
			continue;
		if (!opened) { /* at the last event, when the thread was surely on its CPU */
			at += ev_encode(p + at, "OU[", s->last_clock, NULL, 0);
			++*count;
			opened = 1;
		}
		at += ev_encode(p + at, out ? "KCO" : "KCI", clock, NULL, 0);
		++*count;
		s->kernel_out = out;
		if (out)
			s->last_kco = clock;
	}
	munmap((void *)((const struct kspill_head *)e - 1), size);
	if (*count) {
		s->unordered = 1;
		s->last_clock = top;
	}
	*buf = p;
	*len = at;
}

/* Events that close the thread at its last clock, in emulator order. */
static size_t closing_events(const struct scan *s, uint8_t *buf, uint64_t *count)
{
	size_t n = 0;
	*count = 0;
	if (s->unordered) { /* cut inside a region: close it so it can be sorted */
		if (s->kernel_out) { /* its switch-in is lost: the earliest safe time (lib/rt/kswitch.c) */
			n += ev_encode(buf + n, "KCI", s->last_kco + 1, NULL, 0);
			++*count;
		}
		n += ev_encode(buf + n, "OU]", s->last_clock, NULL, 0);
		++*count;
	} else if (s->kernel_out) {
		n += ev_encode(buf + n, "KCI", s->last_clock, NULL, 0);
		++*count;
	}
	if (s->thread == 'e')
		return n;
	++*count; /* the OHe */
	switch (s->thread) {
	case 0: {
		uint8_t p[16] = { 0 };
		int32_t cpu = -1, creator = -1;
		memcpy(p, &cpu, 4);
		memcpy(p + 4, &creator, 4);
		n += ev_encode(buf + n, "OHx", s->last_clock, p, 16);
		++*count;
		break;
	}
	case 'p':
	case 'w':
		n += ev_encode(buf + n, "OHr", s->last_clock, NULL, 0);
		++*count;
		break;
	default:
		break;
	}
	n += ev_encode(buf + n, "OHe", s->last_clock, NULL, 0);
	return n;
}

static int set(struct json *m, const char *key, struct json *v)
{
	return json_dotset(m, key, v);
}

/* The metadata of a repaired stream: what was on disk, plus every key the
 * emulator requires, among them each model whose events the stream has (a
 * program's ovni_thread_require is written when its thread ends, and the
 * shim's own once the thread has begun: a killed thread may have neither),
 * and the block mark when the stream waited (the shim declares it in
 * memory at the first wait, on disk at the next write). */
static int fix_meta(const char *dir, const struct salvage_info *in, const struct scan *sc)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	struct json *m = json_parse_file(path);
	if (!m || m->type != JSON_OBJECT) {
		json_free(m);
		m = json_new(JSON_OBJECT);
		if (!m) {
			msg_err("%s: out of memory", path);
			return -1;
		}
	}
	int bad = 0;
	if (!json_get(m, "version"))
		bad |= set(m, "version", json_new_number(METADATA_VERSION));
	if (!json_dotget(m, "ovni.lib.version")) {
		bad |= set(m, "ovni.lib.version", json_new_string("1.14.0"));
		bad |= set(m, "ovni.lib.commit", json_new_string("ovni-record"));
	}
	bad |= set(m, "ovni.part", json_new_string("thread"));
	bad |= set(m, "ovni.tid", json_new_number(in->tid));
	bad |= set(m, "ovni.pid", json_new_number(in->pid));
	bad |= set(m, "ovni.loom", json_new_string(in->loom));
	bad |= set(m, "ovni.app_id", json_new_number(in->app_id));
	if (!json_dotget(m, "ovni.require.ovni"))
		bad |= set(m, "ovni.require.ovni", json_new_string(MODEL_OVNI_VERSION));
	for (size_t i = 0; model_infos[i]; i++) {
		const struct model_info *mi = model_infos[i];
		uint8_t id = (uint8_t)mi->id;
		char key[64];
		snprintf(key, sizeof(key), "ovni.require.%s", mi->name);
		if ((sc->models[id >> 6] >> (id & 63) & 1) && !json_dotget(m, key))
			bad |= set(m, key, json_new_string(mi->version));
	}
	if (in->has_rank && !json_dotget(m, "ovni.rank")) {
		bad |= set(m, "ovni.rank", json_new_number(in->rank));
		bad |= set(m, "ovni.nranks", json_new_number(in->nranks));
	}
	char mark[32];
	snprintf(mark, sizeof(mark), "ovni.mark.%d", BLOCKMARK_TYPE);
	if (sc->blocked && !json_dotget(m, mark))
		bad |= blockmark_declare(m);
	if (!json_dotget(m, "ovni.loom_cpus") && in->ncpus) {
		struct json *a = json_new(JSON_ARRAY);
		for (size_t i = 0; a && i < in->ncpus; i++) {
			struct json *c = json_new(JSON_OBJECT);
			bad |= json_set(c, "index", json_new_number((double)i));
			bad |= json_set(c, "phyid", json_new_number(in->phyid[i]));
			bad |= json_append(a, c);
		}
		bad |= set(m, "ovni.loom_cpus", a);
	}
	bad |= set(m, "ovni.finished", json_new_number(1));
	size_t len;
	char *text = bad ? NULL : json_write_pretty(m, &len);
	json_free(m);
	if (!text) {
		msg_err("%s: out of memory", path);
		return -1;
	}
	int rc = file_write_atomic(path, text, len, file_mode_default());
	if (rc != 0)
		msg_err("%s: cannot write: %s", path, strerror(errno));
	free(text);
	return rc;
}

static int is_finished(const char *dir)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stream.json", dir);
	struct json *m = json_parse_file(path);
	long long fin = 0;
	int r = m && json_int(json_dotget(m, "ovni.finished"), &fin) == 0 && fin == 1;
	json_free(m);
	return r;
}

/* A thread killed before its first event has nothing to close: the
 * reference emulator rejects a stream without events ("is not dead") and
 * an ending made up at clock 0 trips its clock gate, so the stream goes
 * (OHC has no effect without its OHx). The process directory goes too
 * when it is left empty. */
static void drop_stream(const char *dir, struct salvage_result *out)
{
	char path[4200];
	static const char *const files[] = { "stream.obs", "stream.json", ".stream.json.tmp", KSPILL_NAME };
	for (int k = 0; k < 4; k++)
		if (file_join_to(path, sizeof(path), dir, files[k]) < sizeof(path))
			unlink(path);
	rmdir(dir);
	snprintf(path, sizeof(path), "%s", dir);
	char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		*slash = 0;
		rmdir(path);
	}
	out->dropped = 1;
}

int salvage_stream(const char *dir, const struct salvage_info *in, struct salvage_result *out)
{
	char path[4200];
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/stream.obs", dir);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !is_finished(dir)) {
		drop_stream(dir, out); /* killed while its stream was being made */
		return 0;
	}
	if (fd < 0) {
		msg_err("%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		msg_err("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	uint64_t size = (uint64_t)st.st_size;
	struct scan s = { 0 };
	s.end = STREAM_HEADER_SIZE;
	uint8_t hdr[STREAM_HEADER_SIZE];
	stream_header(hdr);
	int header_ok = 0; /* a thread killed while its stream was made leaves zeros */
	if (size >= STREAM_HEADER_SIZE) {
		void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			msg_err("%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		scan(p, size, &s);
		header_ok = memcmp(p, hdr, sizeof(hdr)) == 0;
		munmap(p, size);
	}
	int finished = is_finished(dir);
	int rc = 0;
	if (!finished && s.events == 0) {
		close(fd);
		drop_stream(dir, out);
		return 0;
	}
	uint8_t *spill = NULL;
	size_t nspill = 0;
	uint64_t spilled = 0;
	if (!finished) {
		spill_events(dir, &s, &spill, &nspill, &spilled);
		if (in->exited > s.last_clock) /* it ran until its process exited */
			s.last_clock = in->exited;
		uint8_t tail[128];
		uint64_t added;
		size_t n = closing_events(&s, tail, &added);
		if ((!header_ok && pwrite(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) ||
		    ftruncate(fd, (off_t)s.end) != 0 ||
		    pwrite(fd, spill, nspill, (off_t)s.end) != (ssize_t)nspill ||
		    pwrite(fd, tail, n, (off_t)(s.end + nspill)) != (ssize_t)n) {
			msg_err("%s: cannot repair: %s", path, strerror(errno));
			rc = -1;
		} else {
			out->repaired = 1;
			out->cut_bytes = size > s.end ? size - s.end : 0;
			out->spilled = spilled;
			s.events += spilled + added;
			s.end += nspill + n;
			if (spilled)
				model_seen(s.models, 'K');
			if (fix_meta(dir, in, &s) != 0)
				rc = -1;
		}
	}
	free(spill);
	out->events = s.events;
	out->bytes = s.end;
	close(fd);
	return rc;
}

/* The file at dst: the same inode when possible (the reader never writes
 * it), else a copy, read under the readers' lock (an `ovni sort` may be
 * rewriting it). */
static int link_or_copy(const char *src, const char *dst, int must_copy)
{
	if (!must_copy && link(src, dst) == 0)
		return 0;
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in >= 0)
		lock_for_reading(in, src);
	int rc = in < 0 ? -1 : file_copy_from(in, dst, 0644);
	int err = errno;
	if (in >= 0)
		close(in);
	if (rc != 0) {
		msg_err("cannot copy %s to %s: %s", src, dst, strerror(err));
		return -1;
	}
	return 0;
}

/* The CPUs of a loom, from any stream of it that lists them. -1 (reported)
 * when out of memory. */
static int loom_cpus(const struct trace *t, const char *loom, int32_t **phyid, size_t *n)
{
	*phyid = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct stream_meta *m = &t->streams[i].meta;
		if (!m->has_cpus || !m->ncpus || !m->loom || strcmp(m->loom, loom) != 0)
			continue;
		*phyid = calloc(m->ncpus, sizeof(**phyid));
		if (!*phyid) {
			msg_err("out of memory");
			return -1;
		}
		for (size_t k = 0; k < m->ncpus; k++)
			if (m->cpus[k].index >= 0 && (size_t)m->cpus[k].index < m->ncpus)
				(*phyid)[m->cpus[k].index] = (int32_t)m->cpus[k].phyid;
		*n = m->ncpus;
		return 0;
	}
	return 0;
}

static int salvage_one(const struct trace *t, const struct trace_stream *s, const char *dir, int *dropped,
		       uint64_t *spilled)
{
	const struct stream_meta *m = &s->meta;
	struct salvage_info in = { m->loom ? m->loom : "unknown.0", (int)m->pid, (int)m->tid,
				   m->has_app_id ? (int)m->app_id : 1, m->has_rank, (int)m->rank, (int)m->nranks,
				   NULL, 0, 0 };
	int32_t *phyid;
	*dropped = 0;
	if (loom_cpus(t, in.loom, &phyid, &in.ncpus) != 0)
		return -1;
	in.phyid = phyid;
	struct salvage_result r;
	int rc = salvage_stream(dir, &in, &r);
	*dropped = r.dropped;
	*spilled = r.spilled;
	free(phyid);
	return rc;
}

int salvage_copy(const char *path, const char *dst, size_t *ncut)
{
	struct trace t;
	*ncut = 0;
	if (trace_open(&t, path, 0) != 0)
		return -1;
	int rc = 0;
	if (t.archive) {
		msg_err("%s: a packed trace cannot be salvaged; unpack it first", path);
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < t.n; i++) {
		const struct trace_stream *s = &t.streams[i];
		char dir[4200], a[4300], b[4300];
		if (file_join_to(dir, sizeof(dir), dst, s->relpath) >= sizeof(dir)) {
			msg_err("%s: path too long", s->relpath);
			rc = -1;
			break;
		}
		if (file_mkdirs(dir, 0) != 0) {
			msg_err("cannot create %s: %s", dir, strerror(errno));
			rc = -1;
			break;
		}
		int cut = !s->meta.finished;
		static const char *const files[] = { "stream.obs", "stream.json" };
		for (int k = 0; rc == 0 && k < 2; k++) {
			if (file_join_to(a, sizeof(a), s->dir, files[k]) >= sizeof(a) ||
			    file_join_to(b, sizeof(b), dir, files[k]) >= sizeof(b)) {
				msg_err("%s: path too long", s->relpath);
				rc = -1;
				break;
			}
			rc = link_or_copy(a, b, cut);
		}
		/* the slots a killed thread had not written (its staging file stays) */
		if (rc == 0 && cut && file_join_to(a, sizeof(a), s->dir, "stream.obs") < sizeof(a) &&
		    file_join_to(b, sizeof(b), dir, "stream.obs") < sizeof(b)) {
			int fd = open(b, O_WRONLY | O_CLOEXEC);
			if (fd < 0)
				msg_err("%s: %s", b, strerror(errno));
			rc = fd < 0 || stagedir_copy_into(a, fd) < 0 ? -1 : 0;
			if (fd >= 0)
				close(fd);
		}
		/* the switches a killed thread had not written: salvage_one adds them */
		if (rc == 0 && cut && file_join_to(a, sizeof(a), s->dir, KSPILL_NAME) < sizeof(a) &&
		    access(a, F_OK) == 0 && file_join_to(b, sizeof(b), dir, KSPILL_NAME) < sizeof(b))
			rc = link_or_copy(a, b, 0);
		if (rc == 0 && cut) {
			int dropped = 0;
			uint64_t spilled = 0;
			rc = salvage_one(&t, s, dir, &dropped, &spilled);
			++*ncut;
			if (dropped)
				msg_warn("%s: unfinished and without events: the thread is left out", s->obs_name);
			else if (spilled)
				msg_warn("%s: unfinished: the thread is ended at its last event, after the %llu "
					 "context switch events it had not written yet", s->obs_name,
					 (unsigned long long)spilled);
			else
				msg_warn("%s: unfinished: the thread is ended at its last event", s->obs_name);
		}
	}
	char a[4300], b[4300];
	snprintf(a, sizeof(a), "%s/clock-offsets.txt", path);
	snprintf(b, sizeof(b), "%s/clock-offsets.txt", dst);
	if (rc == 0 && access(a, F_OK) == 0)
		rc = link_or_copy(a, b, 0);
	trace_close(&t);
	return rc;
}

void salvage_remove(const char *dir)
{
	file_remove_tree(dir);
}
