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

passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/sockmeter-run.XXXXXX")
trap 'rm -f "$out"' EXIT

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	name=${name#t_}
	if [ ! -f "$t" ]; then
		echo "FAIL $name: no such test $t"
		failed=$((failed + 1))
		continue
	fi
	SM_BUILD=$build timeout -k 5 "${SM_TEST_TIMEOUT:-60}" \
		bash "$t" </dev/null >"$out" 2>&1
	st=$?
	if [ "$st" = 0 ]; then
		echo "PASS $name"
		passed=$((passed + 1))
		continue
	fi
	reason=$(sed -n 's/^reason: //p' "$out" | tail -n 1)
	if [ -z "$reason" ]; then
		if [ "$st" = 124 ] || [ "$st" = 137 ]; then
			reason="timed out after ${SM_TEST_TIMEOUT:-60}s"
		else
			reason="exit status $st: $(tail -n 1 "$out")"
		fi
	fi
	kept=$(sed -n 's/^files kept in //p' "$out" | tail -n 1)
	echo "FAIL $name: $reason${kept:+ (files in $kept)}"
	if [ -n "${SM_VERBOSE:-}" ]; then
		sed 's/^/    | /' "$out"
	fi
	failed=$((failed + 1))
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
