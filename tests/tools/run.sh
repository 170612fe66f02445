#!/usr/bin/env bash
# run.sh - tests of the tools around the library: sockmeter-report (tables,
# CSV, JSON, plots), sockmeter top (in a real terminal, tmux), make
# install/uninstall and the man pages.  Each test meters real programs and
# compares the tools' output with the log records and the bytes moved.
#
#   tests/tools/run.sh [BUILD_DIR] [TEST...]
#
# BUILD_DIR (default: build/ beside this repository's Makefile) holds
# libsockmeter.so and progs/.  Runs every tests/tools/t_*.sh (or only the
# TEST names given, with or without the t_ prefix and .sh suffix), one at
# a time, each bounded to SM_TEST_TIMEOUT seconds (default 60).  Prints
# "PASS name" or "FAIL name: reason" per test, then "N passed, M failed";
# exits 1 if any failed.  SM_VERBOSE=1 also shows a failed test's output;
# SM_KEEP=1 keeps the temp directories.  Needs gnuplot, tmux, man and groff
# besides the build dependencies (scripts/install-deps).

set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/build
if [ $# -gt 0 ] && [ -d "$1" ]; then
	build=$(cd "$1" && pwd)
	shift
fi
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

fix=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-tools-fix.XXXXXX") || exit 2
out=$(mktemp "${TMPDIR:-/tmp}/sockmeter-tools-run.XXXXXX") || exit 2
cleanup() {
	rm -f "$out"
	if [ -n "${SM_KEEP:-}" ]; then
		echo "fixtures kept in $fix"
	else
		rm -rf "$fix"
	fi
}
trap cleanup EXIT

. "$(dirname "$0")/../runner.sh"
export SM_TOP=$top SM_BUILD=$build SM_FIX=$fix
run_tests "$out" "${tests[@]}"
