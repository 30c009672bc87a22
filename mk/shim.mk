# The preload shim (lib/rt): libovni.so built with the host's glibc compiler,
# embedded in the static binary with ovni.h (`ovni record`, `ovni lib`).
.DEFAULT_GOAL := all
RT_SRC := $(sort $(wildcard lib/rt/*.c)) lib/base/json.c lib/base/file.c lib/base/fail.c lib/trace/blockmark.c \
	lib/base/fmt.c lib/trace/stage.c
RT_OBJ := $(RT_SRC:%.c=$(B)/rt-obj/%.o)
RT_SO := $(B)/rt/libovni.so
RT_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -fPIC -fvisibility=hidden \
	-ffunction-sections -fdata-sections -Wall -Wextra -Werror -Wno-unused-parameter \
	-I. -Ilib -include lib/rt/glibc.h -DOVNI_VERSION='"$(VERSION)"' -MMD -MP
RT_LDFLAGS := -shared -Wl,-soname,libovni.so.1 -Wl,--gc-sections -Wl,-z,defs -Wl,-s \
	-Wl,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0

$(B)/rt-obj/%.o: %.c lib/rt/glibc.h
	@mkdir -p $(@D)
	$(HOSTCC) $(RT_CFLAGS) -c $< -o $@

$(RT_SO): $(RT_OBJ)
	@mkdir -p $(@D)
	$(HOSTCC) -o $@ $(RT_OBJ) $(RT_LDFLAGS)

$(B)/rt/blob.o: mk/blob.S $(RT_SO) lib/rt/ovni.h
	$(CC) -c -DRT_SO='"$(RT_SO)"' -DRT_HDR='"lib/rt/ovni.h"' mk/blob.S -o $@

EXTRA_OBJ += $(B)/rt/blob.o
CHECK_DEPS += $(RT_SO)

# The shim's sources with both compilers too (make warnings).
.PHONY: rt-warnings
warnings: rt-warnings
rt-warnings:
	@for c in gcc clang; do \
		for f in $(filter lib/rt/%,$(RT_SRC)); do \
			$$c -std=c11 -D_GNU_SOURCE $(WARN) -I. -Ilib -include lib/rt/glibc.h -fsyntax-only $$f || exit 1; \
		done; echo "warnings: $$c clean (shim)"; \
	done
