#!/usr/bin/env bash
# run.sh - tests of the tools around the library: sockmeter-report (tables,
# CSV, JSON, plots), sockmeter top (in a real terminal, tmux), make
# install/uninstall and the man pages.  Each test meters real programs and
# compares the tools' output with the log records and the bytes moved.
#
#   tests/tools/run.sh [BUILD_DIR] [TEST...]
#
# As tests/integration/run.sh (the same tests/runner.sh and tests/lib.sh),
# plus SM_FIX: a directory of fixtures (metered runs) made once per run and
# shared by the tests (SM_KEEP=1 keeps it too).  Needs gnuplot, tmux, man
# and groff besides the build dependencies (scripts/install-deps).

set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../runner.sh"
fix=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-tools-fix.XXXXXX") || exit 2
cleanup() {
	if [ -n "${SM_KEEP:-}" ]; then
		echo "fixtures kept in $fix"
	else
		rm -rf "$fix"
	fi
}
trap cleanup EXIT
export SM_FIX=$fix
run_suite "$here" "$@"
