# lib.sh - the test harness both suites share: tests/integration (the
# library under real programs) and tests/tools (sockmeter-report, top,
# install, man pages).  Sourced by each suite's own lib.sh, which sets
# SM_SUITE (the temp directory's name) first and adds its own helpers.
#
# A test script is run by its suite's run.sh (through run_suite in
# tests/runner.sh) as `bash t_NAME.sh` with SM_BUILD set to the absolute
# build directory.  It exits 0 when the behaviour holds; on failure it
# calls fail "reason", which stops the test (also from inside a $(...)
# substitution) and prints "reason: ..." for run.sh to show.  Each test
# gets a private temp directory $T; background processes started with
# bg_start are killed when the script ends, however it ends.  Waiting is
# always polling against a deadline (wait_for, bg_wait, wait_listen,
# wait_socket), never a fixed sleep.
#
# Settings a suite's lib.sh may make before sourcing this file:
#   SM_SUITE      name in the temp directory (sockmeter-SUITE.XXXXXX)
#   SM_PYTHON     the python3 to use (default: python3 on PATH)
#   SM_BG_LIMIT   seconds that bound every bg_start (default: none)

set -u

SM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SM_BUILD=${SM_BUILD:?run the tests through tests/integration/run.sh or tests/tools/run.sh}
# SM_TEST_LIB: the library under test, if not the build's (to show that a
# test fails on another build: an older one, a pass-through, a mutant).
LIB=${SM_TEST_LIB:-$SM_BUILD/libsockmeter.so}
PROGS=$SM_BUILD/progs
export SM_TOP SM_BUILD

# Nothing from the caller's environment may steer the library, the tools
# or the programs under test (a proxy would send curl elsewhere).
unset LD_PRELOAD SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL \
	SOCKMETER_CONFIG SOCKMETER_TOP SOCKMETER_LIB SOCKMETER_TCP_INFO \
	SOCKMETER_NAMES SOCKMETER_LOG_MAX_SIZE SOCKMETER_LOG_KEEP SM_UNSEEN_OK \
	SOCKMETER_STATE SOCKMETER_CLOSE_RECORDS SOCKMETER_SYSLOG \
	http_proxy https_proxy HTTP_PROXY \
	HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY TMUX
export LC_ALL=C
# The run's own state directory (private_state_begin, tests/runner.sh): a
# test that sets SOCKMETER_STATE itself, or unsets it, still may.
if [ -n "${SM_PRIVATE_STATE:-}" ] && [ -d "$SM_PRIVATE_STATE" ]; then
	export SOCKMETER_STATE="$SM_PRIVATE_STATE/%u"
fi

# The real python3 binary (a version manager's shim is a shell script,
# which would itself be preloaded and log).
if [ -n "${SM_PYTHON:-}" ] && [ -x "$SM_PYTHON" ]; then
	PY=$SM_PYTHON
else
	PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=
fi
[ -x "${PY:-}" ] || { echo "reason: python3 not found"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-${SM_SUITE:-test}.XXXXXX") ||
	{ echo "reason: mktemp failed"; exit 1; }
BG_PIDS=()
SM_FAILED=0
SM_REASON=$T/.reason

# At exit: background processes stopped; when the test passed, the suite's
# own after-check (sm_suite_check, if its lib.sh defines one); then the
# reason, and $T kept on failure (or with SM_KEEP).
sm_cleanup() {
	local p st=$?
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	[ "$st" = 0 ] && declare -F sm_suite_check >/dev/null && sm_suite_check
	if [ -s "$SM_REASON" ]; then
		SM_FAILED=1
		echo "reason: $(cat "$SM_REASON")"
	fi
	if [ "$SM_FAILED" = 1 ] || [ -n "${SM_KEEP:-}" ]; then
		echo "files kept in $T"
	else
		rm -rf "$T"
	fi
	[ "$SM_FAILED" = 1 ] && exit 1
	return 0
}
trap sm_cleanup EXIT
trap 'exit 130' INT TERM HUP

# fail REASON... - the test failed: say why and stop.  The first reason
# given wins.  In a subshell (a $(...) substitution), stop the test's own
# shell too rather than hand the reason back as a value.
fail() {
	[ -s "$SM_REASON" ] || printf '%s\n' "$*" >"$SM_REASON"
	if [ "$BASH_SUBSHELL" -gt 0 ]; then
		kill -TERM $$
	fi
	exit 1
}

# skip REASON... - the test cannot run here (a missing program, a feature
# not built yet): say why and stop; run.sh shows SKIP, not a failure.
skip() {
	echo "skip: $*"
	exit 77
}

# need CMD... - each command must be installed.
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			fail "$c is not installed (scripts/install-deps)"
	done
}

# need_prog NAME - the test program build/progs/NAME must exist.
need_prog() {
	[ -x "$PROGS/$1" ] || fail "missing $PROGS/$1 (make progs)"
}

# sm CMD... - run CMD with the library preloaded (the SOCKMETER_* settings
# come from the caller: `SOCKMETER_LOG=... sm prog`), bounded in time.
# Only CMD is preloaded, not timeout.
sm() {
	timeout 30 env LD_PRELOAD="$LIB" "$@"
}

# plain CMD... - the same, without the preload.
plain() {
	timeout 30 "$@"
}

# bg_start CMD... - start CMD in the background (bounded to SM_BG_LIMIT
# seconds when the suite sets it); its pid is in $BG_PID and it is killed
# at the end of the test.
bg_start() {
	if [ -n "${SM_BG_LIMIT:-}" ]; then
		timeout "$SM_BG_LIMIT" "$@" &
	else
		"$@" &
	fi
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# sm_now_ms - the time in milliseconds (for deadlines).
sm_now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	printf '%s\n' $((t / 1000))
}

# wait_for SECONDS CMD... - run CMD every 0.05 s until it succeeds; false
# when SECONDS passed first.
wait_for() {
	local until=$(($(sm_now_ms) + $1 * 1000))
	shift
	until "$@"; do
		[ "$(sm_now_ms)" -ge "$until" ] && return 1
		sleep 0.05
	done
}

# bg_wait PID [SECONDS] - wait for a background process to finish by itself;
# returns its exit status, or fails the test after SECONDS (default 20).
bg_wait() {
	local pid=$1 limit=${2:-20}
	wait_for "$limit" eval '! kill -0 '"$pid"' 2>/dev/null' ||
		fail "pid $pid still running after ${limit}s"
	wait "$pid"
}

# free_port - print a TCP port on 127.0.0.1 that was free a moment ago.
free_port() {
	"$PY" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# is_listening PORT - true when a TCP socket listens on PORT (read from
# /proc, so a single-connection server is not disturbed by the probe).
is_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# sm_alive_and PID CMD... - CMD succeeds, or fails the wait for good when
# PID died (for wait_for).
sm_dead=
sm_alive_and() {
	local pid=$1
	shift
	"$@" && return 0
	kill -0 "$pid" 2>/dev/null || { sm_dead=1; return 0; }
	return 1
}

# wait_listen PORT PID [SECONDS] - wait until PORT listens; false if PID
# died first or SECONDS (default 10) passed.
wait_listen() {
	sm_dead=
	wait_for "${3:-10}" sm_alive_and "$2" is_listening "$1" && [ -z "$sm_dead" ]
}

# wait_socket PATH PID [SECONDS] - the same for a unix socket file.
wait_socket() {
	sm_dead=
	wait_for "${3:-10}" sm_alive_and "$2" test -S "$1" && [ -z "$sm_dead" ]
}

# expect_eq WHAT GOT WANT - exact equality of two values.
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# sigexit_peer OUT - until tests/progs/sigexit's peer has printed its
# moved= line into OUT (it prints once its parent is gone; 10 s at most).
sigexit_peer() {
	local i

	for i in $(seq 100); do
		grep -q '^moved=' "$1" && return 0
		sleep 0.1
	done
	return 1
}

# expect_moved WHAT LOG CALL MOVED - LOG's exit record (one) has MOVED
# bytes in its totals one way and none the other: in when CALL is recv,
# out otherwise (tests/progs/sigexit's peer prints what really moved).
expect_moved() {
	local want="[$4, 0]"

	[ "$3" = recv ] && want="[0, $4]"
	expect_eq "$1: [bytes_out, bytes_in] vs what the peer saw" \
		"$(q "$2" "[E['totals']['bytes_out'], E['totals']['bytes_in']]")" \
		"$want"
}

# field NAME FILE - the value of the NAME=VALUE line a test program printed.
field() {
	local v
	v=$(sed -n "s/^$1=//p" "$2" | head -n 1)
	[ -n "$v" ] || fail "no $1= in the output of the program ($2)"
	printf '%s\n' "$v"
}
