#!/usr/bin/env bash
# tests/bench/forkpages.sh - the pages a fork child touches, counted with
# valgrind's lackey (every load, store and instruction of the child, by
# address): a deterministic figure, where a fork's time on these machines
# is noise.  Where page tables are shadowed (a virtual machine such as
# this one) a child pays for each page it touches, even one its parent's
# tables hold: about 4-5 us a page read and 15 a page written, against a
# whole fork-and-exit of about 1 ms (docs/performance.md).
#
#   tests/bench/forkpages.sh [--check] [BUILD_DIR]
#
# Runs build/bench/forkpages (a metered connection, an idle thread, two
# children that only call _exit(0)) without the preload and with its
# defaults, and counts the distinct pages the second child touched: all
# of them, and the library's own (its code, data and the zero-filled
# memory mapped right after it: sm_core, the SM_FORK_DATA page).
#
# --check  exit 1 when the library's own pages exceed FORK_PAGES_BUDGET
#          (5: its GOT, the fork path's code page, the SM_FORK_DATA page
#          and sm_core's child page, and one to spare (a clang build reads
#          a .rodata page too); it was 12 before 2026-12-05), or when the
#          child touches more than FORK_PAGES_ADDED (8; 5 measured, 14
#          before) pages in all beyond the same child without the preload:
#          what the library makes it touch elsewhere (libc, its TLS, the
#          ticker's thread descriptor, which glibc's fork writes); exit 2
#          when a run did not go as it should.
set -euo pipefail
shopt -s inherit_errexit

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
build=$(cd "${1:-build}" && pwd)
lib=$build/libsockmeter.so
prog=$build/bench/forkpages
here=$(cd "$(dirname "$0")" && pwd)
budget=${FORK_PAGES_BUDGET:-5}
added=${FORK_PAGES_ADDED:-8}

for f in "$lib" "$prog"; do
	[ -e "$f" ] || { echo "forkpages.sh: $f missing (make $f)" >&2; exit 2; }
done
command -v valgrind >/dev/null ||
	{ echo "forkpages.sh: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d /tmp/sockmeter-forkpages.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run NAME ENV...: forkpages under lackey, a trace per process in
# $tmp/NAME (lk.PID), the program's maps in $tmp/NAME/maps.
run() {
	local name=$1
	shift
	mkdir "$tmp/$name"
	env -u LD_PRELOAD -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG \
		"$@" SOCKMETER_LOG="$tmp/$name/%n.%p.log" \
		valgrind --tool=lackey --trace-mem=yes \
		--log-file="$tmp/$name/lk.%p" "$prog" "$tmp/$name/maps" \
		>"$tmp/$name/out" 2>&1 || {
		echo "forkpages.sh: the $name run failed" >&2
		cat "$tmp/$name/out" >&2
		exit 2
	}
}

run none
run defaults LD_PRELOAD="$lib" SOCKMETER_VALGRIND=meter
grep -q libsockmeter "$tmp/defaults/maps" ||
	{ echo "forkpages.sh: the preload did not reach the program" >&2; exit 2; }
PY=$(command -v python3)
"$PY" "$here/forkpages.py" "$tmp/none" "$tmp/defaults" "$budget" "$added" \
	"$check"
