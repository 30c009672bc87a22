# ovni: one static multi-call binary. `./build.sh` fetches what this needs.
#   make                  ./ovni, statically linked against musl and zstd
#   make check            every test; ends with "N passed, N failed"
#   make check SANITIZE=1 the same suite, ASan+UBSan build (glibc toolchain)
#   make valgrind         the tools under valgrind (VALGRIND=1 build, glibc, -O1)
#   make bench            the benchmarks
#   make warnings         -Wall -Wextra -Werror with gcc and clang
#   make install PREFIX=DIR [DESTDIR=DIR]

VERSION := 0.1.0
PREFIX ?= /usr/local
SANITIZE ?=
VALGRIND ?=
ZSTD_SRC ?= $(firstword $(wildcard .deps/zstd-*))

WARN := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
STD := -std=c11 -D_GNU_SOURCE
ifeq ($(SANITIZE),1)
CC := gcc
B := build/asan
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDMODE :=
BIN := $(B)/ovni
else ifeq ($(VALGRIND),1)
CC := gcc
B := build/vg
OPT := -O1 -g
LDMODE :=
BIN := $(B)/ovni
else
CC := musl-gcc
B := build/rel
OPT := -O2 -g
LDMODE := -static
BIN := ovni
endif
# The preload shim is built with the system's own (glibc) compiler.
HOSTCC ?= gcc

CFLAGS_ALL := $(STD) $(WARN) $(OPT) -I. -Ilib -I$(B)/gen -I$(ZSTD_SRC)/lib -MMD -MP $(CFLAGS)
LDFLAGS_ALL := $(OPT) $(LDMODE) $(LDFLAGS)
LIBS := -lpthread -lm

LIB_SRC := $(shell find lib -name '*.c' -not -path 'lib/rt/*' | sort)
CMD_SRC := $(sort $(wildcard cmd/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(B)/%.o)

ZSTD_DIRS := common compress decompress
ZSTD_C := $(foreach d,$(ZSTD_DIRS),$(wildcard $(ZSTD_SRC)/lib/$(d)/*.c))
ZSTD_OBJ := $(patsubst $(ZSTD_SRC)/lib/%.c,$(B)/zstd/%.o,$(ZSTD_C))
ZSTD_FLAGS := -O2 -DZSTD_DISABLE_ASM -DZSTD_MULTITHREAD -DZSTD_LEGACY_SUPPORT=0 -w

# Objects that other parts of the build add (the embedded shim).
EXTRA_OBJ :=

TEST_SRC := $(sort $(wildcard tests/unit/*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tools/%)

-include $(sort $(wildcard mk/*.mk))

.PHONY: all check diffcheck bench valgrind install warnings clean zstd-check FORCE
all: $(BIN)

zstd-check:
	@test -f "$(ZSTD_SRC)/lib/zstd.h" || { echo "make: no zstd source; run ./build.sh (or set ZSTD_SRC=DIR)" >&2; exit 1; }

$(B)/gen/gitrev.h: FORCE
	@mkdir -p $(@D)
	@rev=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	if ! git diff --quiet HEAD -- 2>/dev/null; then rev="$$rev-dirty"; fi; \
	line="#define OVNI_GIT_REV \"$$rev\""; \
	[ "$$(cat $@ 2>/dev/null)" = "$$line" ] || echo "$$line" > $@

$(B)/ovni.o: $(B)/gen/gitrev.h
$(B)/%.o: %.c | zstd-check
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -DOVNI_VERSION='"$(VERSION)"' -c $< -o $@

$(B)/zstd/%.o: $(ZSTD_SRC)/lib/%.c | zstd-check
	@mkdir -p $(@D)
	$(CC) $(ZSTD_FLAGS) $(filter -fsanitize% -g,$(OPT)) -c $< -o $@

$(B)/libzstd.a: $(ZSTD_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/libovnitools.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/ovni: $(B)/ovni.o $(CMD_OBJ) $(EXTRA_OBJ) $(B)/libovnitools.a $(B)/libzstd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(B)/ovni.o $(CMD_OBJ) $(EXTRA_OBJ) $(B)/libovnitools.a $(B)/libzstd.a $(LIBS)

ifneq ($(BIN),$(B)/ovni)
$(BIN): $(B)/ovni
	cp $< $@.tmp && mv $@.tmp $@
endif

$(B)/tests/%: tests/unit/%.c $(B)/libovnitools.a $(B)/libzstd.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests/unit $(LDFLAGS_ALL) -o $@ $< $(B)/libovnitools.a $(B)/libzstd.a $(LIBS)

$(B)/tools/%: tests/tools/%.c $(B)/libovnitools.a $(B)/libzstd.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(B)/libovnitools.a $(B)/libzstd.a $(LIBS)

# The whole library, not only what a program pulls in: no symbol of cmd/ or
# mk/ may be missing from it.
$(B)/tools/linkall: tests/tools/linkall.c $(B)/libovnitools.a $(B)/libzstd.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< -Wl,--whole-archive $(B)/libovnitools.a -Wl,--no-whole-archive $(B)/libzstd.a $(LIBS)

TEST_ENV = OVNI=$(abspath $(B)/ovni) BUILD=$(abspath $(B)) SANITIZE=$(SANITIZE) HOSTCC=$(HOSTCC)

check: $(BIN) $(TEST_BIN) $(TOOL_BIN) $(CHECK_DEPS)
	@$(TEST_ENV) sh tests/run.sh

# Random traces against the reference in ../shared (not part of check).
# DIFFCHECK_ARGS, e.g. "-n 2000" or "-m nosv -s 500".
diffcheck: $(BIN)
	@OVNI=$(abspath $(BIN)) bash tests/diffcheck.sh $(DIFFCHECK_ARGS)

bench: $(BIN) $(TOOL_BIN) $(CHECK_DEPS)
	@$(TEST_ENV) sh tests/bench/run.sh

# Slow (minutes): its own dynamic glibc build, since valgrind cannot run ASan.
valgrind:
	@$(MAKE) --no-print-directory VALGRIND=1 build/vg/ovni build/vg/rt/libovni.so
	@OVNI=$(abspath build/vg/ovni) BUILD=$(abspath build/vg) sh tests/valgrind.sh

# Both compilers, full warnings, syntax only: catches what the other one misses.
warnings:
	@for c in gcc clang; do \
		for f in ovni.c $(CMD_SRC) $(LIB_SRC) $(TEST_SRC) $(TOOL_SRC); do \
			$$c $(STD) $(WARN) -I. -Ilib -Itests/unit -I$(B)/gen -I$(ZSTD_SRC)/lib -DOVNI_VERSION='"$(VERSION)"' -fsyntax-only $$f || exit 1; \
		done; echo "warnings: $$c clean"; \
	done

ALIASES := ovnidump ovniemu ovnisort ovnisync ovnitop
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -s -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/ovni
	for a in $(ALIASES); do ln -sf ovni $(DESTDIR)$(PREFIX)/bin/$$a; done
	install -m 644 docs/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 completion/ovni.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/ovni
	install -m 644 completion/_ovni $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_ovni
	install -m 644 completion/ovni.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/ovni.fish

clean:
	rm -rf build ovni ovni.tmp

-include $(shell find $(B) -name '*.d' 2>/dev/null)
