# tests/bench/bench.mk - benchmark targets, included by the Makefile.
#   make bench        side-by-side wall-clock suite; rewrites BENCHMARKS.md
#   make bench-instr  instructions added per wrapped call (callgrind)
#   make test-instr   the same, failing when a budget is missed, and the
#                     pages a fork child touches (tests/bench/forkpages.sh)
#   make bench-tools  the tools (report, top) on big logs; its own section
#   make bench-churn  only the churn part (issue 9), printed
#   make bench-tcpinfo  what tcp_info and names cost (issue 11), printed
BENCH_BIN := $(BUILD)/bench/loadgen $(BUILD)/bench/churngen \
	$(BUILD)/bench/syscost $(BUILD)/bench/forkpages

.PHONY: bench bench-instr test-instr bench-tcpinfo bench-fork-state

$(BUILD)/bench/loadgen: tests/bench/loadgen.c tests/bench/fullio.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -gdwarf-4 -Wall -Wextra -Werror \
		-Wmissing-prototypes $< -o $@ -pthread

$(BUILD)/bench/churngen: tests/bench/churngen.c tests/bench/fullio.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -gdwarf-4 -Wall -Wextra -Werror \
		-Wmissing-prototypes $< -o $@ -pthread

# -z now: no symbol bound lazily in a child (tests/bench/forkpages.sh).
$(BUILD)/bench/forkpages: tests/bench/forkpages.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -gdwarf-4 -Wall -Wextra -Werror \
		-Wmissing-prototypes -Wl,-z,now $< -o $@ -pthread

$(BUILD)/bench/syscost: tests/bench/syscost.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -gdwarf-4 -Wall -Wextra -Werror \
		-Wmissing-prototypes $< -o $@

# The churn part alone (tests/bench/churn.sh), printed, not written.
.PHONY: bench-churn
bench-churn: $(BUILD)/libsockmeter.so $(BUILD)/bench/churngen \
	$(BUILD)/bench/syscost
	$(Q)tests/bench/churn.sh $(BUILD)

$(BUILD)/bench/forkrate: tests/bench/forkrate.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror $< -o $@ -pthread

bench: $(BUILD)/libsockmeter.so $(BENCH_BIN) $(BUILD)/bench/tcpinfo_cost bench-fork-state
	$(Q)tests/bench/run.sh $(BUILD)
	$(Q)tests/bench/tcpinfo.sh $(BUILD)

# What the tcp_info and names categories cost, off the data path.
$(BUILD)/bench/tcpinfo_cost: tests/bench/tcpinfo_cost.c $(UNIT_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -gdwarf-4 -Wall -Wextra -Werror $< \
		$(UNIT_OBJ) -o $@ $(INIH_LIBDIR)/libinih.a -pthread

bench-tcpinfo: $(BUILD)/libsockmeter.so $(BUILD)/bench/tcpinfo_cost
	$(Q)BENCH_OUT= tests/bench/tcpinfo.sh $(BUILD)

# Durable state's cost to fork (issue 8): forks/s with and without it.
bench-fork-state: $(BUILD)/libsockmeter.so $(BUILD)/bench/forkrate
	$(Q)tests/bench/fork_state.sh $(BUILD)

bench-instr: $(BUILD)/libsockmeter.so $(BENCH_BIN)
	$(Q)tests/with-private-state.sh tests/bench/instr.sh $(BUILD)
	$(Q)tests/with-private-state.sh tests/bench/forkpages.sh $(BUILD)

# The instruction budgets, and the pages a fork child touches.
test-instr: $(BUILD)/libsockmeter.so $(BENCH_BIN)
	$(Q)tests/with-private-state.sh tests/bench/instr.sh --check $(BUILD)
	$(Q)tests/with-private-state.sh tests/bench/forkpages.sh --check $(BUILD)

# make bench-tools - sockmeter-report and sockmeter top on generated logs
# of 10^5, 10^6 and 10^7 records (made from a real run's records), top on
# 2,000 logs and a 1 GB log; writes its own section of BENCHMARKS.md.
.PHONY: bench-tools
bench-tools: $(BUILD)/libsockmeter.so
	$(Q)/usr/bin/python3 tests/bench/tools_bench.py $(BUILD)
