# tests/bench/bench.mk - benchmark targets, included by the Makefile.
#   make bench        side-by-side wall-clock suite; rewrites BENCHMARKS.md
#   make bench-instr  instructions added per wrapped call (callgrind)
#   make test-instr   the same, failing when a budget is missed
BENCH_BIN := $(BUILD)/bench/loadgen

.PHONY: bench bench-instr test-instr

$(BUILD)/bench/loadgen: tests/bench/loadgen.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
		-Wmissing-prototypes $< -o $@ -pthread

bench: $(BUILD)/libsockmeter.so $(BENCH_BIN)
	$(Q)tests/bench/run.sh $(BUILD)

bench-instr: $(BUILD)/libsockmeter.so $(BENCH_BIN)
	$(Q)tests/bench/instr.sh $(BUILD)

test-instr: $(BUILD)/libsockmeter.so $(BENCH_BIN)
	$(Q)tests/bench/instr.sh --check $(BUILD)
