#!/usr/bin/env bash
# with-private-state.sh COMMAND [ARGS...] - run COMMAND with the preload's
# state files in a directory of its own, removed afterwards (see
# private_state_begin in tests/runner.sh); exits with COMMAND's status.
# The sanitizer and transparency targets (tests/hardening.mk) and the
# instruction counts (tests/bench/bench.mk) run through it.
set -u
. "$(dirname "$0")/runner.sh"
private_state_begin
"$@"
st=$?
private_state_end
exit "$st"
