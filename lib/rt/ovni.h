/* ovni.h: the libovni 1.x runtime API (trace format v3), as shipped by
 * `ovni lib DIR`. Same functions, semantics and struct ovni_ev layout as the
 * reference library 1.14; the implementation is the `ovni record` shim. */
#ifndef OVNI_H
#define OVNI_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>
#include <sys/types.h>

#define OVNI_METADATA_VERSION 3
#define OVNI_TRACEDIR "ovni"
#define OVNI_MAX_HOSTNAME 512
#define OVNI_MAX_EV_BUF (2 * 1024LL * 1024LL)
#define OVNI_STREAM_MAGIC "ovni"
#define OVNI_STREAM_VERSION 1
#define OVNI_STREAM_EXT ".obs"
#define OVNI_MODEL_VERSION "1.1.0"
#define OVNI_LIB_VERSION "1.14.0"
#define OVNI_GIT_COMMIT "unknown"

/* Checks at run time that the loaded library can serve the header used at
 * build time (same major, minor not newer); aborts otherwise. */
#define ovni_version_check() ovni_version_check_str(OVNI_LIB_VERSION)

struct __attribute__((__packed__)) ovni_ev_header {
	uint8_t flags; /* bits 0-3: payload size - 1 (0: none); 0x10: jumbo */
	uint8_t model;
	uint8_t category;
	uint8_t value;
	uint64_t clock;
};

struct __attribute__((__packed__)) ovni_jumbo_payload {
	uint32_t size;
	uint8_t data[1];
};

union __attribute__((__packed__)) ovni_ev_payload {
	uint8_t u8[16];
	int8_t i8[16];
	uint16_t u16[8];
	int16_t i16[8];
	uint32_t u32[4];
	int32_t i32[4];
	uint64_t u64[2];
	int64_t i64[2];
	struct ovni_jumbo_payload jumbo;
};

struct __attribute__((__packed__)) ovni_ev {
	struct ovni_ev_header header;
	union ovni_ev_payload payload;
};

void ovni_version_check_str(const char *version);
void ovni_version_get(const char **version, const char **commit);

void ovni_proc_init(int app, const char *loom, int pid);
void ovni_proc_set_rank(int rank, int nranks);
void ovni_proc_fini(void);

void ovni_thread_init(pid_t tid);
void ovni_thread_require(const char *model, const char *version);
void ovni_thread_free(void);
int ovni_thread_isready(void);

void ovni_add_cpu(int index, int phyid);

void ovni_ev_set_clock(struct ovni_ev *ev, uint64_t clock);
uint64_t ovni_ev_get_clock(const struct ovni_ev *ev);
void ovni_ev_set_mcv(struct ovni_ev *ev, const char *mcv);
uint64_t ovni_clock_now(void);
void ovni_payload_add(struct ovni_ev *ev, const uint8_t *buf, int size);
int ovni_ev_size(const struct ovni_ev *ev);
int ovni_payload_size(const struct ovni_ev *ev);
void ovni_ev_emit(struct ovni_ev *ev);
void ovni_ev_jumbo_emit(struct ovni_ev *ev, const uint8_t *buf, uint32_t bufsize);
void ovni_flush(void);

int ovni_attr_has(const char *key);
void ovni_attr_set_double(const char *key, double num);
void ovni_attr_set_boolean(const char *key, int value);
void ovni_attr_set_str(const char *key, const char *value);
void ovni_attr_set_json(const char *key, const char *json);
double ovni_attr_get_double(const char *key);
int ovni_attr_get_boolean(const char *key);
const char *ovni_attr_get_str(const char *key);
char *ovni_attr_get_json(const char *key);
void ovni_attr_flush(void);

#define OVNI_MARK_STACK 1

void ovni_mark_type(int32_t type, long flags, const char *title);
void ovni_mark_label(int32_t type, int64_t value, const char *label);
void ovni_mark_push(int32_t type, int64_t value);
void ovni_mark_pop(int32_t type, int64_t value);
void ovni_mark_set(int32_t type, int64_t value);

#ifdef __cplusplus
}
#endif

#endif /* OVNI_H */
