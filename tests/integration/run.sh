#!/usr/bin/env bash
# run.sh - sockmeter's integration tests: real programs run under the
# preload, their logs compared with the bytes known to have moved.
#
#   tests/integration/run.sh BUILD_DIR [TEST...]
#
# BUILD_DIR holds libsockmeter.so and progs/ (make integration builds both).
# Runs every tests/integration/t_*.sh (or only the TEST names given, with or
# without the t_ prefix and .sh suffix), one at a time, each bounded to
# SM_TEST_TIMEOUT seconds (default 60).  Prints "PASS name" or
# "FAIL name: reason" per test and then "N passed, M failed"; exits 1 if
# any failed.  SM_VERBOSE=1 also shows a failed test's whole output;
# SM_KEEP=1 keeps every test's temp directory.

set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [TEST...]" >&2
	exit 2
fi
build=$(cd "$1" 2>/dev/null && pwd) || {
	echo "$0: no build directory $1" >&2
	exit 2
}
shift
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -f "$build/libsockmeter.so" ]; then
	echo "$0: $build/libsockmeter.so is missing (run make)" >&2
	exit 2
fi

tests=()
if [ $# -gt 0 ]; then
	for name in "$@"; do
		name=${name%.sh}
		name=${name#t_}
		tests+=("$here/t_$name.sh")
	done
else
	for t in "$here"/t_*.sh; do
		tests+=("$t")
	done
fi

out=$(mktemp "${TMPDIR:-/tmp}/sockmeter-run.XXXXXX")
trap 'rm -f "$out"' EXIT

. "$(dirname "$0")/../runner.sh"
export SM_BUILD=$build
run_tests "$out" "${tests[@]}"
