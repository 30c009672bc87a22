#include "trace/blockmark.h"
#include "base/event.h"

#include <stdio.h>
#include <string.h>

static const char *const label[BM_NCALLS] = {
	[BM_MUTEX] = "pthread_mutex_lock",
	[BM_MUTEX_TIMED] = "pthread_mutex_timedlock",
	[BM_COND] = "pthread_cond_wait",
	[BM_COND_TIMED] = "pthread_cond_timedwait",
	[BM_BARRIER] = "pthread_barrier_wait",
	[BM_JOIN] = "pthread_join",
	[BM_SEM] = "sem_wait",
	[BM_SEM_TIMED] = "sem_timedwait",
	[BM_RDLOCK] = "pthread_rwlock_rdlock",
	[BM_WRLOCK] = "pthread_rwlock_wrlock",
	[BM_SLEEP] = "sleep",
	[BM_USLEEP] = "usleep",
	[BM_NANOSLEEP] = "nanosleep",
	[BM_CLOCK_NANOSLEEP] = "clock_nanosleep",
};

int blockmark_declare(struct json *meta)
{
	struct json *d = json_new(JSON_OBJECT), *labels = json_new(JSON_OBJECT);
	int bad = !d || !labels;
	bad |= json_set(d, "title", json_new_string("Blocked in"));
	bad |= json_set(d, "chan_type", json_new_string("stack"));
	for (int v = 1; v < BM_NCALLS; v++) {
		char key[12];
		snprintf(key, sizeof(key), "%d", v);
		bad |= json_set(labels, key, json_new_string(label[v]));
	}
	bad |= json_set(d, "labels", labels);
	char key[32];
	snprintf(key, sizeof(key), "ovni.mark.%d", BLOCKMARK_TYPE);
	return json_dotset(meta, key, d) != 0 || bad ? -1 : 0;
}

int blockmark_declared(const struct json *meta)
{
	char key[32];
	snprintf(key, sizeof(key), "ovni.mark.%d.title", BLOCKMARK_TYPE);
	const struct json *title = json_dotget(meta, key);
	return title && title->type == JSON_STRING && strcmp(title->u.str.s, "Blocked in") == 0;
}

int blockmark_withdraw(struct json *meta)
{
	char key[12];
	snprintf(key, sizeof(key), "%d", BLOCKMARK_TYPE);
	return json_del(json_dotget(meta, "ovni.mark"), key);
}

int blockmark_is_push(const uint8_t *e)
{
	/* the payload: i64 value, i32 type */
	if (e[1] != 'O' || e[2] != 'M' || e[3] != '[' || (e[0] & EV_FLAG_JUMBO) || ev_size(e) != EV_HEADER_SIZE + 12)
		return 0;
	int32_t type;
	memcpy(&type, e + EV_HEADER_SIZE + 8, 4);
	return type == BLOCKMARK_TYPE;
}
