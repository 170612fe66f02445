# sockmeter - one non-recursive Makefile.
#   make            build/libsockmeter.so
#   make test       unit tests (Check) and integration tests (real programs)
#   make clean      remove build/
#   V=1             show the commands

CC      ?= cc
BUILD   := build
INIH_LIBDIR := $(shell pkg-config --variable=libdir inih 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow \
           -Wstrict-prototypes -Wpointer-arith -Wno-unused-parameter
# -gdwarf-4: valgrind before 3.20 cannot read clang's DWARF 5 and gives
# up on the whole program it runs (a host run under valgrind with a
# clang-built library preloaded; callgrind's make test-instr); GCC's it
# reads, and DWARF 4 costs neither compiler anything.
CFLAGS  ?= -O2 -g -gdwarf-4
# -fno-plt: calls into libc go through the GOT, which the library binds at
# load (-z now) anyway, not through PLT stubs on a page of their own: one
# page less for a fork child to touch (core/rawsys.h's SM_FORK_DATA).
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE -U_FORTIFY_SOURCE -fPIC -fno-plt \
           -fvisibility=hidden $(WARN) $(shell pkg-config --cflags inih) \
           $(CFLAGS) -MMD -MP
LDLIBS_SO := $(INIH_LIBDIR)/libinih.a -ldl -pthread
# The library's own syscall() and clone() calls go to libc, not to its
# exported wrappers (preload/wrap_syscall.c, preload/wrap_vfork.c); its
# clock calls go to libc's own, not to another preload's (preload/clock.c),
# and the calls it makes to look at fds and ids are system calls
# (preload/rawlibc.c).
RAW_CALLS := fstat fstatat stat lstat getsockname getpeername getsockopt \
	ioctl lseek getuid geteuid getegid
LDFLAGS_SO := -Wl,--version-script=preload/exports.map \
	-Wl,--wrap=syscall -Wl,--wrap=clone \
	-Wl,--wrap=clock_gettime -Wl,--wrap=clock_nanosleep -Wl,--wrap=nanosleep \
	$(foreach f,$(RAW_CALLS),-Wl,--wrap=$(f))

ifeq ($(V),1)
Q :=
else
Q := @
endif

CORE_SRC    := $(wildcard core/*.c)
CONFIG_SRC  := $(wildcard config/*.c)
PRELOAD_SRC := $(wildcard preload/*.c)
LIB_OBJ     := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC) $(CONFIG_SRC) $(PRELOAD_SRC))
UNIT_OBJ    := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRC) $(CONFIG_SRC))

UNIT_SRC    := $(wildcard tests/unit/check_*.c)
UNIT_BIN    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
PROG_SRC    := $(wildcard tests/progs/*.c)
PROG_BIN    := $(patsubst tests/progs/%.c,$(BUILD)/progs/%,$(PROG_SRC))

.PHONY: all test unit integration tools-test clean progs
all: $(BUILD)/libsockmeter.so $(BUILD)/sockmeter-recover

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# pthread_cancel's unwinding walks through the stdio wrappers' frames to
# the cleanup they register (preload/wrap_stdio.c), and pthread_exit's
# through its wrapper's (preload/wrap_exit.c): unwind tables, the default
# on x86_64, asked for everywhere.  Not -fexceptions: that would make
# libgcc_s a dependency of the library.
$(BUILD)/obj/preload/wrap_stdio.o $(BUILD)/obj/preload/wrap_exit.o: \
	ALL_CFLAGS += -fasynchronous-unwind-tables
$(BUILD)/asan/obj/preload/wrap_stdio.o $(BUILD)/tsan/obj/preload/wrap_stdio.o \
$(BUILD)/asan/obj/preload/wrap_exit.o $(BUILD)/tsan/obj/preload/wrap_exit.o: \
	SAN_CFLAGS += -fasynchronous-unwind-tables

# Only the interposed calls are exported; inih is linked in privately so a
# host with its own ini_parse never binds to ours (or we to its).
# preload/fork.ld: what a fork child touches of the library's code
# and variables, each on one page (core/rawsys.h).
$(BUILD)/libsockmeter.so: $(LIB_OBJ) preload/exports.map preload/fork.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJ) $(LDLIBS_SO) -Wl,--exclude-libs,ALL \
		-Wl,-z,now -Wl,-z,relro -Wl,-T,preload/fork.ld $(LDFLAGS_SO)

$(BUILD)/tests/check_%: tests/unit/check_%.c $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -fvisibility=default $< \
		$(UNIT_OBJ) -o $@ $(INIH_LIBDIR)/libinih.a $(CHECK_LIBS) -pthread

# sockmeter recover: the same core code as the library's own recovery.
$(BUILD)/sockmeter-recover: tools/sockmeter-recover.c $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $< $(UNIT_OBJ) -o $@ $(INIH_LIBDIR)/libinih.a

# Test programs: plain programs, some deliberately fortified.
$(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror $< -o $@ -pthread

$(BUILD)/progs/sandboxed $(BUILD)/progs/rawclone: tests/progs/childxfer.h
$(BUILD)/progs/sigfirst $(BUILD)/progs/blockedsigs: tests/progs/threadcount.h

# fortified*.c must really be built the way -D_FORTIFY_SOURCE programs are.
$(BUILD)/progs/fortified $(BUILD)/progs/fortified_stdio: $(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -D_FORTIFY_SOURCE=2 -Wall -Wextra -Werror $< -o $@

# staticexit is linked statically: no preload reaches it.
$(BUILD)/progs/staticexit: tests/progs/staticexit.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static $< -o $@

# uring_xfer moves its bytes through io_uring (liburing).
$(BUILD)/progs/uring_xfer: tests/progs/uring_xfer.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror $< -o $@ -luring

# deepbind loads deeplib's library (twice built: bound now, with its GOT
# read-only, and lazily) by path, and by bare name through its RUNPATH.
DEEP_LIBS := $(BUILD)/progs/deep/libsmdeep.so $(BUILD)/progs/deep/libsmdeep_lazy.so \
	     $(BUILD)/progs/deep/libsmaudit.so
$(BUILD)/progs/deep/libsmdeep.so: tests/progs/deeplib/smdeep.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared -Wl,-z,now -Wl,-z,relro $< -o $@
$(BUILD)/progs/deep/libsmdeep_lazy.so: tests/progs/deeplib/smdeep.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared -Wl,-z,lazy -Wl,-z,norelro $< -o $@
$(BUILD)/progs/deep/libsmaudit.so: tests/progs/deeplib/audit.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared $< -o $@
# t_exit_handlers_after: an exit handler that runs after the library's.
DEEP_LIBS += $(BUILD)/progs/deep/libsmlateexit.so
$(BUILD)/progs/deep/libsmlateexit.so: tests/progs/deeplib/lateexit.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -fPIC -shared $< -o $@
# A text relocation (x86-64 assembly): deepbind's textrel case.
ifeq ($(shell uname -m),x86_64)
DEEP_LIBS += $(BUILD)/progs/deep/libsmtextrel.so
endif
$(BUILD)/progs/deep/libsmtextrel.so: tests/progs/deeplib/textrel.S
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -Wl,-z,notext $< -o $@
$(BUILD)/progs/deepbind: tests/progs/deepbind.c $(DEEP_LIBS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror $< -o $@ -ldl -pthread '-Wl,-rpath,$$ORIGIN/deep'

progs: $(PROG_BIN)

unit: $(UNIT_BIN)
	$(Q)fail=0; for t in $(UNIT_BIN); do echo "== $$t"; $$t || fail=1; done; exit $$fail

integration: $(BUILD)/libsockmeter.so $(BUILD)/sockmeter-recover $(PROG_BIN)
	$(Q)tests/integration/run.sh $(BUILD)

# The report tool, plots, the live view, install and man pages.
tools-test: $(BUILD)/libsockmeter.so $(BUILD)/sockmeter-recover $(PROG_BIN)
	$(Q)tests/tools/run.sh $(BUILD)

test: unit integration tools-test test-instr

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Meter a real program (curl against a local http.server) and show the log.
.PHONY: demo
demo: $(BUILD)/libsockmeter.so
	$(Q)scripts/demo.sh

include tests/bench/bench.mk
-include tests/hardening.mk mk/install.mk
