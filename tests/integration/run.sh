#!/usr/bin/env bash
# run.sh - sockmeter's integration tests: real programs run under the
# preload, their logs compared with the bytes known to have moved.
#
#   tests/integration/run.sh [BUILD_DIR] [TEST...]
#
# BUILD_DIR (default: build/ beside the Makefile) holds libsockmeter.so and
# progs/ (make integration builds both).  Runs every
# tests/integration/t_*.sh (or only the TEST names given, with or without
# the t_ prefix and .sh suffix), one at a time, each bounded to
# SM_TEST_TIMEOUT seconds (default 60).  Prints "PASS name" or
# "FAIL name: reason" per test and then "N passed, M failed"; exits 1 if
# any failed.  SM_VERBOSE=1 also shows a failed test's whole output;
# SM_KEEP=1 keeps every test's temp directory.  The command line and the
# loop are tests/runner.sh's, the helpers tests/lib.sh's (both shared
# with tests/tools).

set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../runner.sh"
run_suite "$here" "$@"
