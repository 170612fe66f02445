# lib.sh - helpers for the integration tests; sourced by every t_*.sh.
#
# A test script is run by run.sh as `bash t_NAME.sh` with SM_BUILD set to
# the absolute build directory.  It exits 0 when the behaviour holds; on
# failure it calls fail "reason", which stops the test (also from inside a
# $(...) substitution) and prints "reason: ..." for run.sh to show.  Each
# test gets a private temp directory $T; background processes started with
# bg_start are killed when the script ends, however it ends.

set -u

SM_BUILD=${SM_BUILD:?run the tests through tests/integration/run.sh}
LIB=$SM_BUILD/libsockmeter.so
PROGS=$SM_BUILD/progs
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Nothing from the caller's environment may steer the library or the
# programs under test (a proxy would send curl elsewhere).
unset LD_PRELOAD SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL \
	SOCKMETER_CONFIG SOCKMETER_TOP SOCKMETER_TCP_INFO SOCKMETER_NAMES \
	SOCKMETER_LOG_MAX_SIZE SOCKMETER_LOG_KEEP \
	SM_UNSEEN_OK http_proxy https_proxy HTTP_PROXY \
	HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY
export LC_ALL=C

# The real python3 binary (a version manager's shim is a shell script,
# which would itself be preloaded and log).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=
[ -x "${PY:-}" ] || { echo "reason: python3 not found"; exit 1; }
LOGQ=("$PY" "$HERE/logq.py")

T=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-it.XXXXXX") ||
	{ echo "reason: mktemp failed"; exit 1; }
BG_PIDS=()
SM_FAILED=0
SM_REASON=$T/.reason

# Every test proves the preload saw every TCP byte: after it passed, each
# sockmeter log it left under $T must show 0 unseen bytes (tcp_info: the
# kernel's count agrees with ours) in the close record of every TCP
# connection (unseen.py).  A test
# whose program moves bytes a preload cannot see sets SM_UNSEEN_OK=1.
sm_check_unseen() {
	local out
	[ -s "$SM_REASON" ] || [ -n "${SM_UNSEEN_OK:-}" ] && return 0
	out=$("$PY" "$HERE/unseen.py" "$T" 2>&1) ||
		printf 'bytes the preload did not see: %s\n' "$out" >"$SM_REASON"
}

sm_cleanup() {
	local p st=$?
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${BG_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	[ "$st" = 0 ] && sm_check_unseen
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

# wrapped_calls - the names of every wrapped call, one a line, sorted: the
# X-macro list SM_REAL_FUNCS of preload/preload.h, through the compiler's
# preprocessor (so a group header's new calls are in it at once).
wrapped_calls() {
	printf '#include "preload.h"\n#define X(name, ret, args) SM_CALL name\nSM_REAL_FUNCS(X)\n' |
		"${CC:-cc}" -E -P -D_GNU_SOURCE -I"$HERE/../../preload" \
			$(pkg-config --cflags inih 2>/dev/null) -x c - 2>"$T/cpp.err" |
		grep -o 'SM_CALL [A-Za-z0-9_]*' | awk '{ print $2 }' | sort -u
	[ -s "$T/cpp.err" ] && fail "preprocessing preload/preload.h: $(head -n 3 "$T/cpp.err")"
	return 0
}

# need_prog NAME - the test program build/progs/NAME must exist.
need_prog() {
	[ -x "$PROGS/$1" ] || fail "missing $PROGS/$1 (build with make integration)"
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

# bg_start CMD... - start CMD in the background (bounded to 60 s); its pid
# is in $BG_PID and it is killed at the end of the test.
bg_start() {
	timeout 60 "$@" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# bg_wait PID [SECONDS] - wait for a background process to finish by itself;
# returns its exit status, or fails the test after SECONDS (default 20).
bg_wait() {
	local pid=$1 limit=${2:-20} i=0 st
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt $((limit * 20)) ] && fail "pid $pid still running after ${limit}s"
		sleep 0.05
	done
	wait "$pid"
	st=$?
	return "$st"
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

# wait_listen PORT PID [SECONDS] - wait until PORT listens; false if PID
# died first or SECONDS (default 10) passed.
wait_listen() {
	local port=$1 pid=$2 limit=${3:-10} i=0
	until is_listening "$port"; do
		kill -0 "$pid" 2>/dev/null || return 1
		i=$((i + 1))
		[ "$i" -gt $((limit * 50)) ] && return 1
		sleep 0.02
	done
}

# wait_socket PATH PID [SECONDS] - the same for a unix socket file.
wait_socket() {
	local path=$1 pid=$2 limit=${3:-10} i=0
	until [ -S "$path" ]; do
		kill -0 "$pid" 2>/dev/null || return 1
		i=$((i + 1))
		[ "$i" -gt $((limit * 50)) ] && return 1
		sleep 0.02
	done
}

# q LOG EXPR - the value of EXPR over the log (see logq.py); a log that
# cannot be read or an expression that fails stops the test.
q() {
	local out
	out=$("${LOGQ[@]}" "$1" "$2" 2>&1) || fail "$out"
	printf '%s\n' "$out"
}

# check LOG EXPR [WHAT] - EXPR must be true over the log.
check() {
	local out
	out=$("${LOGQ[@]}" check "$1" "$2" 2>&1) || fail "${3:+$3: }$out"
}

# check_py LOG FILE [WHAT] - run the Python checks in FILE over the log
# (logq.py run): every assert must hold.
check_py() {
	local out
	out=$("${LOGQ[@]}" run "$1" "$2" 2>&1) || fail "${3:+$3: }$out"
}

# expect_eq WHAT GOT WANT - exact equality of two values.
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

# field NAME FILE - the value of the NAME=VALUE line a test program printed.
field() {
	local v
	v=$(sed -n "s/^$1=//p" "$2" | head -n 1)
	[ -n "$v" ] || fail "no $1= in the output of the program ($2)"
	printf '%s\n' "$v"
}

# make_file PATH BYTES - a file of BYTES random bytes.
make_file() {
	head -c "$2" /dev/urandom >"$1" || fail "cannot make $1"
	[ "$(stat -c %s "$1")" = "$2" ] || fail "short file $1"
}

# one_log PATTERN - print the single file matching the glob PATTERN.
one_log() {
	local files
	# shellcheck disable=SC2206
	files=($1)
	if [ "${#files[@]}" != 1 ] || [ ! -f "${files[0]}" ]; then
		fail "expected one log matching $1, found: ${files[*]}"
	fi
	printf '%s\n' "${files[0]}"
}

# sm_lines FILE - the number of lines in FILE starting with "sockmeter:".
sm_lines() {
	grep -c '^sockmeter:' "$1"
}

# start_http DIR - serve DIR with python3 -m http.server (not preloaded) on
# a free port; sets HTTP_PORT.  Retries with another port if one was taken.
start_http() {
	local try
	for try in 1 2 3 4 5; do
		HTTP_PORT=$(free_port)
		bg_start "$PY" -m http.server "$HTTP_PORT" --bind 127.0.0.1 \
			--directory "$1" >"$T/http.$try.log" 2>&1
		wait_listen "$HTTP_PORT" "$BG_PID" 10 && return 0
		kill "$BG_PID" 2>/dev/null
	done
	fail "http.server did not start"
}

# socat_send KIND SRC DEST RECV_ENV SEND_ENV - move file SRC over a fresh
# TCP (KIND=tcp) or unix (KIND=unix) connection into DEST with two socat
# processes, each run under `env RECV_ENV` / `env SEND_ENV` (e.g.
# "LD_PRELOAD=... SOCKMETER_LOG=..."; empty for none).  Sets SOCAT_PORT or
# SOCAT_PATH; fails the test if either side fails.
socat_send() {
	local kind=$1 src=$2 dest=$3 renv=$4 senv=$5 try listen connect rpid
	for try in 1 2 3 4 5; do
		if [ "$kind" = tcp ]; then
			SOCAT_PORT=$(free_port)
			listen=TCP-LISTEN:$SOCAT_PORT,bind=127.0.0.1,reuseaddr
			connect=TCP:127.0.0.1:$SOCAT_PORT
		else
			SOCAT_PATH=$T/socat.$try.sock
			listen=UNIX-LISTEN:$SOCAT_PATH
			connect=UNIX-CONNECT:$SOCAT_PATH
		fi
		# shellcheck disable=SC2086
		bg_start env $renv socat -u "$listen" "OPEN:$dest,creat,trunc" \
			2>"$T/socat-recv.err"
		rpid=$BG_PID
		if [ "$kind" = tcp ]; then
			wait_listen "$SOCAT_PORT" "$rpid" 10 && break
		else
			wait_socket "$SOCAT_PATH" "$rpid" 10 && break
		fi
		kill "$rpid" 2>/dev/null
		rpid=
	done
	[ -n "$rpid" ] || fail "socat listener did not start: $(cat "$T/socat-recv.err")"
	# shellcheck disable=SC2086
	timeout 30 env $senv socat -u "OPEN:$src" "$connect" \
		2>"$T/socat-send.err" ||
		fail "sending socat failed: $(cat "$T/socat-send.err")"
	bg_wait "$rpid" 20 ||
		fail "receiving socat failed: $(cat "$T/socat-recv.err")"
	cmp -s "$src" "$dest" || fail "socat: $dest differs from $src"
}
