# lib.sh - helpers for the tools tests (sockmeter-report, sockmeter top,
# make install, the man pages); sourced by every t_*.sh.
#
# run.sh runs each test as `bash t_NAME.sh` with SM_TOP (the repository),
# SM_BUILD (the build directory) and SM_FIX (a directory shared by the
# tests of one run, for the fixtures below) set.  A test exits 0 when the
# behaviour holds; on failure it calls fail "reason" (from anywhere, also
# inside $(...)), which prints "reason: ..." for run.sh.  Each test gets a
# private temp directory $T; background processes started with bg_start
# are killed when the script ends.

set -u

SM_TOP=${SM_TOP:?run the tests through tests/tools/run.sh}
SM_BUILD=${SM_BUILD:?run the tests through tests/tools/run.sh}
SM_FIX=${SM_FIX:?run the tests through tests/tools/run.sh}
LIB=$SM_BUILD/libsockmeter.so
PROGS=$SM_BUILD/progs
HERE=$SM_TOP/tests/tools
REPORT=$SM_TOP/scripts/sockmeter-report
TOPCMD=$SM_TOP/scripts/sockmeter-top
LAUNCHER=$SM_TOP/scripts/sockmeter
export SM_TOP SM_BUILD SM_FIX

# Nothing from the caller's environment may steer the library or the
# programs under test (a proxy would send curl elsewhere).
unset LD_PRELOAD SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL \
	SOCKMETER_CONFIG SOCKMETER_TOP SOCKMETER_LIB http_proxy https_proxy \
	HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY TMUX
export LC_ALL=C

# Debian's python3 (what the tools' #! names); a version manager's shim is
# a shell script, which would itself be preloaded.
if [ -x /usr/bin/python3 ]; then
	PY=/usr/bin/python3
else
	PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=
fi
[ -x "${PY:-}" ] || { echo "reason: python3 not found"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-tools.XXXXXX") ||
	{ echo "reason: mktemp failed"; exit 1; }
BG_PIDS=()
SM_REASON=$T/.reason

sm_cleanup() {
	local p failed=0
	if [ -s "$SM_REASON" ]; then
		failed=1
		echo "reason: $(cat "$SM_REASON")"
	fi
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ "$failed" = 1 ] || [ -n "${SM_KEEP:-}" ]; then
		echo "files kept in $T"
	else
		rm -rf "$T"
	fi
}
trap sm_cleanup EXIT
trap 'exit 130' INT TERM HUP

# fail REASON... - the test failed: say why and stop (the first reason
# given wins; from a $(...) subshell, the test's own shell stops too).
fail() {
	[ -s "$SM_REASON" ] || printf '%s\n' "$*" >"$SM_REASON"
	if [ "$BASH_SUBSHELL" -gt 0 ]; then
		kill -TERM $$
	fi
	exit 1
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			fail "$c is not installed (scripts/install-deps)"
	done
}

# sm CMD... - run CMD with the library preloaded, bounded in time (the
# SOCKMETER_* settings come from the caller).
sm() {
	timeout 30 env LD_PRELOAD="$LIB" "$@"
}

# bg_start CMD... - run CMD in the background; its pid is in $BG_PID and
# it is killed when the test ends.
bg_start() {
	"$@" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_for SECONDS CMD... - run CMD every 0.1 s until it succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# pycheck DESCRIPTION < code - run Python code (with tlib's helpers) and
# fail with DESCRIPTION and the assertion's message if it raises.
pycheck() {
	local desc=$1 out
	{ echo "from tlib import *"; cat; } >"$T/check.py"
	if ! out=$(PYTHONPATH=$HERE PYTHONDONTWRITEBYTECODE=1 "$PY" "$T/check.py" 2>&1); then
		fail "$desc: $(printf '%s\n' "$out" | grep -v '^ ' | tail -n 1)"
	fi
	[ -z "$out" ] || printf '%s\n' "$out"
}

# ---- fixtures: real metered runs, made once per run.sh and shared ------

# $SM_FIX/dl: a metered HTTP server (tests/tools/serve.py, python3's
# http.server) serves body.bin (1,000,000 bytes) twice to one metered curl
# that fetches it twice (so curl reuses its fd 5).  logs/*.log (JSON,
# interval 0.2 s); curl.out has one line per transfer: size_download
# size_header size_request.
fixture_download() {
	local d=$SM_FIX/dl spid port
	[ -f "$d/done" ] && return 0
	need curl
	rm -rf "$d"
	mkdir -p "$d/www" "$d/logs"
	head -c 1000000 /dev/urandom >"$d/www/body.bin"
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$d/logs/%n.%p.log" \
		sm "$PY" "$HERE/serve.py" "$d/www" 2 "$d/port" &
	spid=$!
	wait_for 10 test -s "$d/port" || fail "fixture: the HTTP server did not start"
	port=$(cat "$d/port")
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$d/logs/%n.%p.log" \
		sm curl -s -o /dev/null -o /dev/null \
		-w '%{size_download} %{size_header} %{size_request}\n' \
		"http://127.0.0.1:$port/body.bin" "http://127.0.0.1:$port/body.bin" \
		>"$d/curl.out" || fail "fixture: curl failed"
	wait "$spid" || fail "fixture: the HTTP server failed"
	touch "$d/done"
}

# $SM_FIX/paced: tests/tools/pace.py sends 600,000 bytes at 200,000 B/s
# (3 s, 4000-byte writes) to a socat sink, both metered (JSON, interval
# 0.2 s).  pace.out
# says "sent=N local=ADDR seconds=S"; port holds socat's port.
PACE_BYTES=600000
PACE_RATE=200000
fixture_paced() {
	local d=$SM_FIX/paced port spid
	[ -f "$d/done" ] && return 0
	need socat
	rm -rf "$d"
	mkdir -p "$d/logs"
	port=$(free_port)
	echo "$port" >"$d/port"
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$d/logs/%n.%p.log" \
		sm socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" \
		"CREATE:$d/recv.bin" &
	spid=$!
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$d/logs/%n.%p.log" \
		sm "$PY" "$HERE/pace.py" 127.0.0.1 "$port" "$PACE_BYTES" "$PACE_RATE" 4000 \
		>"$d/pace.out" || fail "fixture: pace.py failed"
	wait "$spid" || fail "fixture: socat failed"
	touch "$d/done"
}

# $SM_FIX/fork: build/progs/forker 3 (a parent and 3 children, each with
# its own log); forker.out is its output.
fixture_fork() {
	local d=$SM_FIX/fork
	[ -f "$d/done" ] && return 0
	[ -x "$PROGS/forker" ] || fail "missing $PROGS/forker (make progs)"
	rm -rf "$d"
	mkdir -p "$d/logs"
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$d/logs/%n.%p.log" \
		sm "$PROGS/forker" 3 >"$d/forker.out" || fail "fixture: forker failed"
	touch "$d/done"
}
