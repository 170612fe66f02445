# hardening.mk - fuzzing and sanitizer builds (issue 4); included by the
# Makefile, which provides BUILD, CC, UNIT_SRC, CORE_SRC, CONFIG_SRC,
# PRELOAD_SRC, INIH_LIBDIR, CHECK_LIBS and WARN.
#
#   make fuzz-short       both libFuzzer harnesses, 25 s each, + regressions
#   make fuzz-long        the config harness for FUZZ_TIME s (default 600),
#                         then what it found that adds coverage merged
#                         into tests/fuzz/corpus/config (FUZZ_HARNESS=summary
#                         for the formatter's harness)
#   make test-asan        unit tests + stress program, ASan + UBSan
#   make test-tsan        unit tests + stress program (preloaded), TSan
#   make test-transparency  other projects' test suites, with and without
#                         the preload (tests/transparency/run.sh)
#   make test-clang       the library, recover and unit tests built with
#                         clang (in $(BUILD)/clang), the unit tests run: a
#                         GCC-only attribute once broke that build unseen
#
# None of these is part of `make test`; .ci/run runs them separately.

HARD_CLANG   ?= clang
HARD_INIH_CFLAGS := $(shell pkg-config --cflags inih 2>/dev/null)
HARD_CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
HARD_INIH_A  := $(INIH_LIBDIR)/libinih.a

.PHONY: fuzz fuzz-short fuzz-long fuzz-merge test-asan test-tsan \
	test-transparency test-clang

test-clang:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/clang CC=$(HARD_CLANG) \
		all unit

# ---- fuzzing -------------------------------------------------------------

FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_FLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	$(HARD_INIH_CFLAGS) $(FUZZ_EXTRA_CFLAGS)
FUZZ_TIME  ?= 600
FUZZ_SHORT ?= 25
# FUZZ_EXTRA_CFLAGS: more flags for the harnesses (not tracked: remove
# $(FUZZ_DIR)/fuzz_* to rebuild with new ones).

# config.c plans the window tiers (core/window.c) to settle each span's res.
$(FUZZ_DIR)/fuzz_config: tests/fuzz/fuzz_config.c $(CONFIG_SRC) config/config.h \
		core/window.c core/window.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(HARD_CLANG) $(FUZZ_FLAGS) tests/fuzz/fuzz_config.c $(CONFIG_SRC) \
		core/window.c $(HARD_INIH_A) -o $@

FUZZ_SUMMARY_SRC := core/summary.c core/classify.c core/fdtab.c core/window.c \
	core/tcpinfo.c $(CONFIG_SRC)
$(FUZZ_DIR)/fuzz_summary: tests/fuzz/fuzz_summary.c $(FUZZ_SUMMARY_SRC) \
		core/summary.h core/fdtab.h core/classify.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(HARD_CLANG) $(FUZZ_FLAGS) tests/fuzz/fuzz_summary.c \
		$(FUZZ_SUMMARY_SRC) $(HARD_INIH_A) -o $@

fuzz: $(FUZZ_DIR)/fuzz_config $(FUZZ_DIR)/fuzz_summary

# Regression inputs first (each must pass), then a short run per harness
# on a scratch copy of the corpus (the committed corpus is only read).
fuzz-short: fuzz
	$(Q)tests/fuzz/short.sh $(FUZZ_DIR) $(FUZZ_SHORT)

# The long run: FUZZ_TIME seconds on one harness (FUZZ_HARNESS, config by
# default), then what it found that adds coverage merged into the committed
# corpus (libFuzzer -merge=1 into the corpus dir: the seeds stay, only new
# coverage is added).  A crash leaves crash-* in $(FUZZ_DIR) and fails.
FUZZ_HARNESS ?= config
fuzz-long: fuzz
	$(Q)h=$(FUZZ_HARNESS); mkdir -p $(FUZZ_DIR)/long-$$h; \
	dict=; [ -f tests/fuzz/$$h.dict ] && dict=-dict=tests/fuzz/$$h.dict; \
	echo "== fuzz_$$h: $(FUZZ_TIME) s, log in $(FUZZ_DIR)/$$h.long.log"; \
	$(FUZZ_DIR)/fuzz_$$h $$dict -max_total_time=$(FUZZ_TIME) -timeout=10 \
		-rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/crash-$$h- \
		$(FUZZ_DIR)/long-$$h tests/fuzz/corpus/$$h \
		>$(FUZZ_DIR)/$$h.long.log 2>&1 || \
		{ tail -n 40 $(FUZZ_DIR)/$$h.long.log; exit 1; }; \
	grep -E '^stat::number_of_executed_units|^Done' $(FUZZ_DIR)/$$h.long.log
	$(Q)$(MAKE) --no-print-directory fuzz-merge FUZZ_HARNESS=$(FUZZ_HARNESS)

fuzz-merge: fuzz
	$(Q)h=$(FUZZ_HARNESS); before=$$(ls tests/fuzz/corpus/$$h | wc -l); \
	$(FUZZ_DIR)/fuzz_$$h -merge=1 tests/fuzz/corpus/$$h $(FUZZ_DIR)/long-$$h \
		>$(FUZZ_DIR)/$$h.merge.log 2>&1 || \
		{ tail -n 20 $(FUZZ_DIR)/$$h.merge.log; exit 1; }; \
	echo "corpus $$h: $$before -> $$(ls tests/fuzz/corpus/$$h | wc -l) files"

# ---- sanitizers ----------------------------------------------------------
#
# Separate build trees, $(BUILD)/asan and $(BUILD)/tsan, each with the unit
# tests, a copy of the library and the stress programs, built with the
# sanitizer.  The unit tests run as they are; the library is preloaded
# behind the sanitizer's runtime (LD_PRELOAD="libasan.so lib.so", or a
# TSan-built stress program that pulls libtsan in) and the stress programs
# run under it (tests/stress/run.sh), counts still checked exactly.

SAN_CFLAGS := -std=gnu11 -D_GNU_SOURCE -U_FORTIFY_SOURCE -fPIC \
	-fvisibility=hidden $(WARN) $(HARD_INIH_CFLAGS) -O1 -g \
	-fno-omit-frame-pointer -MMD -MP
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
# GCC warns (-Wtsan) that TSan ignores atomic_thread_fence, which the fd
# table's seqlock uses: see tests/tsan.supp.
TSAN_FLAGS := -fsanitize=thread \
	$(shell $(CC) -Werror -Wno-tsan -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-tsan)
SAN_STRESS := stress sigio forkblock forkstorm namestress

define san_tree
# $(1): asan or tsan; $(2): its flags
$(1)_LIB_OBJ  := $$(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(CORE_SRC) $(CONFIG_SRC) $(PRELOAD_SRC))
$(1)_UNIT_OBJ := $$(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(CORE_SRC) $(CONFIG_SRC))
# check_killstep is left out: it single-steps a traced child through
# ~2,200 kills (about 20 s uninstrumented), each a fresh process, state
# file and recovery; instrumented, it would take minutes, and a
# sanitizer's runtime (fake stacks, shadow memory) in the stepped child
# is not the code it means to step through.
$(1)_UNIT_BIN := $$(patsubst tests/unit/%.c,$(BUILD)/$(1)/tests/%,$$(filter-out tests/unit/check_killstep.c,$(UNIT_SRC)))
$(1)_PROGS    := $$(addprefix $(BUILD)/$(1)/progs/,$(SAN_STRESS))

$(BUILD)/$(1)/obj/%.o: %.c
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$@")
	$$(Q)$$(CC) $$(SAN_CFLAGS) $(2) -c $$< -o $$@

$(BUILD)/$(1)/libsockmeter.so: $$($(1)_LIB_OBJ)
	@$$(if $$(Q),echo "  LD      $$@")
	$$(Q)$$(CC) $(2) -shared -o $$@ $$^ $(HARD_INIH_A) -ldl -pthread \
		-Wl,--exclude-libs,ALL -Wl,-z,now $(LDFLAGS_SO)

$(BUILD)/$(1)/tests/check_%: tests/unit/check_%.c $$($(1)_UNIT_OBJ)
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$@")
	$$(Q)$$(CC) $$(SAN_CFLAGS) $(2) $(HARD_CHECK_CFLAGS) -fvisibility=default \
		$$< $$($(1)_UNIT_OBJ) -o $$@ $(HARD_INIH_A) $(CHECK_LIBS) -pthread

$(BUILD)/$(1)/progs/%: tests/progs/%.c
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$@")
	$$(Q)$$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror \
		$(2) $$< -o $$@ -pthread
endef

$(eval $(call san_tree,asan,$(ASAN_FLAGS)))
$(eval $(call san_tree,tsan,$(TSAN_FLAGS)))

# A failed check aborts the test program with the report on stderr.  Check's
# per-test timeout (4 s) is stretched tenfold: instrumented code on a busy
# 2-core machine runs a few tests of check_meter past it.
ASAN_ENV := ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 CK_TIMEOUT_MULTIPLIER=10
TSAN_ENV := TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=7 suppressions=$(CURDIR)/tests/tsan.supp" \
	CK_TIMEOUT_MULTIPLIER=10

test-asan: $(asan_UNIT_BIN) $(BUILD)/asan/libsockmeter.so $(asan_PROGS)
	$(Q)fail=0; for t in $(asan_UNIT_BIN); do echo "== asan $$t"; \
		env $(ASAN_ENV) $$t || fail=1; done; \
	env $(ASAN_ENV) CC="$(CC)" tests/with-private-state.sh tests/stress/run.sh asan $(BUILD)/asan || fail=1; \
	exit $$fail

test-tsan: $(tsan_UNIT_BIN) $(BUILD)/tsan/libsockmeter.so $(tsan_PROGS)
	$(Q)fail=0; for t in $(tsan_UNIT_BIN); do echo "== tsan $$t"; \
		env $(TSAN_ENV) $$t || fail=1; done; \
	env $(TSAN_ENV) tests/with-private-state.sh tests/stress/run.sh tsan $(BUILD)/tsan || fail=1; \
	exit $$fail

# ---- other projects' test suites -----------------------------------------

test-transparency: $(BUILD)/libsockmeter.so
	$(Q)tests/with-private-state.sh tests/transparency/run.sh $(BUILD)
