#!/usr/bin/env bash
# run.sh - the stress programs under a sanitizer-built copy of the library.
#
#   tests/stress/run.sh asan|tsan SAN_BUILD_DIR
#
# SAN_BUILD_DIR (build/asan or build/tsan, made by `make test-asan` /
# `make test-tsan`) holds libsockmeter.so and progs/ built with the
# sanitizer.  Each program runs with the library preloaded behind the
# sanitizer's runtime:
#   asan: LD_PRELOAD="libasan.so SAN_BUILD_DIR/libsockmeter.so" (ASan wants
#         its runtime first; the programs are ASan-built too);
#   tsan: LD_PRELOAD=SAN_BUILD_DIR/libsockmeter.so, into TSan-built
#         programs, which load libtsan themselves.
# The sanitizer options come from the caller (ASAN_OPTIONS/TSAN_OPTIONS:
# halt on the first report).  The programs and checks:
#   stress    8 threads x 64 sockets, STRESS_CALLS calls (default the
#             full 1,000,000 under ASan, about 4 s; 300,000 under TSan,
#             which is several times slower), exit record exact
#             (check_stress.py)
#   sigio     signal handlers sending while main is in send/recv
#             (check_sigio.py)
#   forkblock fork while threads are blocked in recv/send/accept, 5 forks
#   forkstorm 20 forks during traffic
#   namestress 8 threads resolving names (getaddrinfo, gethostbyname_r)
#             and connecting while the ticker names peers (names table
#             writers and reader at once); every connection named
# Prints "PASS name" / "FAIL name: reason" and exits 1 if any failed.
set -u

san=${1:?usage: run.sh asan|tsan SAN_BUILD_DIR}
dir=$(cd "${2:?usage: run.sh asan|tsan SAN_BUILD_DIR}" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
lib=$dir/libsockmeter.so
progs=$dir/progs
PY=$(python3 -c 'import sys; print(sys.executable)')
cc=${CC:-cc}

unset LD_PRELOAD SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL \
	SOCKMETER_CONFIG SOCKMETER_TOP
case $san in
asan)
	runtime=$("$cc" -print-file-name=libasan.so)
	preload="$runtime $lib"
	calls=${STRESS_CALLS:-1000000}
	;;
tsan)
	preload=$lib
	calls=${STRESS_CALLS:-300000}
	;;
*)
	echo "run.sh: asan or tsan, not $san" >&2
	exit 2
	;;
esac
[ -f "$lib" ] || { echo "run.sh: no $lib" >&2; exit 2; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-$san.XXXXXX") || exit 2
failed=0

# result NAME STATUS REASON_FILE - report one program's outcome
result() {
	if [ "$2" = 0 ]; then
		echo "PASS $san $1"
		return
	fi
	failed=$((failed + 1))
	echo "FAIL $san $1: $3"
	# the sanitizer's report, if any
	grep -h -A 30 -E '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY:|.*runtime error:)' \
		"$T"/*.err 2>/dev/null | head -n 60 | sed 's/^/    | /'
}

# meter NAME CMD... - run CMD preloaded, JSON log in $T/NAME.log
meter() {
	local name=$1
	shift
	SOCKMETER_LOG=$T/$name.log SOCKMETER_FORMAT=json SOCKMETER_TOP=0 \
		SOCKMETER_INTERVAL=0.5 LD_PRELOAD="$preload" \
		timeout 240 "$@" >"$T/$name.out" 2>"$T/$name.err"
}

start=$(date +%s)
meter stress "$progs/stress" 8 64 "$calls" 3
st=$?
if [ "$st" != 0 ]; then
	result stress 1 "exit status $st: $(tail -n 2 "$T/stress.err" | tr '\n' ' ')"
elif ! "$PY" "$here/check_stress.py" "$T/stress.out" "$T/stress.log" >"$T/stress.chk" 2>&1; then
	result stress 1 "$(tail -n 1 "$T/stress.chk")"
else
	result stress 0 ""
	cat "$T/stress.chk"
fi

meter sigio "$progs/sigio" 300
st=$?
if [ "$st" != 0 ]; then
	result sigio 1 "exit status $st: $(tail -n 2 "$T/sigio.err" | tr '\n' ' ')"
elif ! "$PY" "$here/check_sigio.py" "$T/sigio.out" "$T/sigio.log" >"$T/sigio.chk" 2>&1; then
	result sigio 1 "$(tail -n 1 "$T/sigio.chk")"
else
	result sigio 0 ""
fi

# TSan refuses a child that starts a thread after a multi-threaded fork
# (the library restarts its ticker in the child) unless told otherwise: its
# own limitation, documented with die_after_fork.
forkenv=()
[ "$san" = tsan ] && forkenv=(TSAN_OPTIONS="${TSAN_OPTIONS:-} die_after_fork=0")

# GCC 12's ASan does not make its allocator fork-safe (no atfork handler
# takes its locks; later LLVM releases added one): a thread that holds one
# of its size-class locks while another thread forks leaves that lock held
# for ever in the child, whose next allocation of that size, or
# LeakSanitizer's check at exit, then waits for ever.  Seen with gdb: a
# forkblock child forks its grandchild while the child's ticker, started
# again after the first fork, is inside ASan's thread start (pthread_getattr_np
# -> free -> a new quarantine batch -> the 8 KB class lock); in the
# grandchild its own ticker's start and LeakSanitizer both wait on that
# lock.  glibc's malloc takes its locks around fork, so without ASan this
# cannot happen, and the plain build runs forkblock with no pause
# (t_fork_blocked.sh).  Under ASan the programs pause 100 ms where a
# thread may still be starting (FORK_SETTLE_MS): forkblock's children
# before forking their grandchild (measured: 6 of 40 runs hung without the
# pause, 0 of 140 with it), forkstorm before its first fork, while the
# preload's ticker may still be starting (children 0 and 1 hung: 4 of 200
# runs without, 0 of 200 with).  Each program kills and names a child that
# hangs ("child PID hung") within 10 s.
settle=()
[ "$san" = asan ] && settle=(FORK_SETTLE_MS=100)

# fork_case NAME LOGS PROG ARGS... - run a fork program (its logs in
# $T/NAME/), PASS when it exits 0 with LOGS log files.  Under ASan a hang
# (a timeout, or a child the program saw hang: the allocator lock above,
# still possible between other threads) is run again, up to twice, said on
# stderr; three hangs in a row fail.
fork_case() {
	local name=$1 want=$2 st n try
	shift 2
	for try in 1 2 3; do
		rm -rf "${T:?}/$name"
		mkdir -p "$T/$name"
		SOCKMETER_LOG=$T/$name/%p.log SOCKMETER_FORMAT=json \
			SOCKMETER_INTERVAL=0.2 LD_PRELOAD="$preload" timeout 120 \
			env "${forkenv[@]}" "${settle[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"
		st=$?
		[ "$san" = asan ] && [ "$try" != 3 ] || break
		# a timeout, or the program's own "child N hung"
		[ "$st" = 124 ] || grep -Eq '^(grand)?child [0-9]+ hung' "$T/$name.err" ||
			break
		echo "$name: a process hung under ASan (try $try), run again" >&2
	done
	n=$(find "$T/$name" -type f | wc -l)
	if [ "$st" != 0 ]; then
		result "$name" 1 "exit status $st: $(tail -n 2 "$T/$name.err" | tr '\n' ' ')"
	elif [ "$n" != "$want" ]; then
		result "$name" 1 "$n logs, expected $want"
	else
		result "$name" 0 ""
	fi
}

fork_case forkblock 11 "$progs/forkblock" 5
fork_case forkstorm 21 "$progs/forkstorm" 20

meter names "$progs/namestress" 8 150
st=$?
named=$(grep -c '"peer_name":"localhost"' "$T/names.log" 2>/dev/null)
if [ "$st" != 0 ]; then
	result namestress 1 "exit status $st: $(tail -n 2 "$T/names.err" | tr '\n' ' ')"
elif [ "${named:-0}" -lt 1200 ]; then
	result namestress 1 "$named records with peer_name, expected 1200 or more"
else
	result namestress 0 ""
fi

echo "$san stress: $failed failed, $(($(date +%s) - start)) s"
if [ "$failed" = 0 ]; then
	rm -rf "$T"
else
	echo "files kept in $T"
fi
[ "$failed" = 0 ]
