# tests/bench/bench.mk - benchmark targets, included by the Makefile.
.PHONY: bench
bench: $(BUILD)/libsockmeter.so
	@echo "bench: not written yet" >&2; exit 1
