# lib.sh - helpers for the tools tests (sockmeter-report, sockmeter top,
# make install, the man pages); sourced by every t_*.sh.
#
# The harness itself (fail, need, $T, sm, bg_start, wait_for, free_port...)
# is the one both suites share, tests/lib.sh: see there.  run.sh also sets
# SM_FIX, a directory shared by the tests of one run, for the fixtures
# below.  Only what the tools tests alone use lives here.

SM_SUITE=tools
# Debian's python3 (what the tools' #! names).
SM_PYTHON=/usr/bin/python3
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SM_FIX=${SM_FIX:?run the tests through tests/tools/run.sh}
HERE=$SM_TOP/tests/tools
REPORT=$SM_TOP/scripts/sockmeter-report
TOPCMD=$SM_TOP/scripts/sockmeter-top
LAUNCHER=$SM_TOP/scripts/sockmeter
export SM_FIX

# pycheck DESCRIPTION < code - run Python code (with tlib's helpers) and
# fail with DESCRIPTION and the assertion's message if it raises.
pycheck() {
	local desc=$1 out
	{ echo "from tlib import *"; cat; } >"$T/check.py"
	# No assert: the here-document came out empty (an unbound variable
	# in it, under set -u) and would check nothing.
	grep -q assert "$T/check.py" || fail "$desc: the check holds no assert"
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
	# Listening before pace.py connects: a refused first try is one more
	# (never connected) TCP socket in pace.py's log, which the tests that
	# count connections do not expect (seen under load).
	wait_listen "$port" "$spid" 20 || fail "fixture: socat did not listen"
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

# tcpxfer_logged LOG BYTES RCVBUF DELAY_US - one TCP transfer of BYTES
# from a metered sender (json log LOG) to tests/progs/tcpxfer's server
# reading through an RCVBUF receive buffer with DELAY_US between reads;
# returns once both ended.  Files under $T/xfer.*.
tcpxfer_logged() {
	local spid cpid
	[ -x "$PROGS/tcpxfer" ] || fail "missing test program tcpxfer (make progs)"
	rm -f "$T/xfer.port" "$T/xfer.hold"
	bg_start "$PROGS/tcpxfer" serve "$T/xfer.port" "$2" "$3" "$4"
	spid=$BG_PID
	wait_for 10 test -s "$T/xfer.port" || fail "the server did not start"
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$1" \
		sm "$PROGS/tcpxfer" send "$(cat "$T/xfer.port")" "$2" 0 \
		"$T/xfer.hold" >"$T/xfer.send.out" &
	cpid=$!
	wait_for 20 grep -q ready=1 "$T/xfer.send.out" ||
		fail "the sender did not finish"
	touch "$T/xfer.hold"
	wait "$cpid" || fail "sender failed"
	wait "$spid" || fail "server failed"
}

# $SM_FIX/steady: tests/tools/steady.py (a unix socketpair moving 10,000
# bytes every 25 ms for 4.5 s, and a long pair moving 2,000 bytes each
# round until 2.7 s) run twice at once, metered (JSON).  logs/steady.log:
# interval 2 s, the whole log.  rot/steady.log: the default interval
# (10 s: no interval record), rotated at 24 KiB keeping 2 files, so the
# set holds only its last 1.5 to 2 s, close records then the exit
# record.  steady.out and rot.out: one line per round, "TIME BYTES".
fixture_steady() {
	local d=$SM_FIX/steady pid
	[ -f "$d/done" ] && return 0
	rm -rf "$d"
	mkdir -p "$d/logs" "$d/rot"
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$d/rot/steady.log" \
		SOCKMETER_LOG_MAX_SIZE=24K SOCKMETER_LOG_KEEP=2 \
		sm "$PY" "$HERE/steady.py" 4.5 2.7 >"$d/rot.out" &
	pid=$!
	SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=2 SOCKMETER_LOG="$d/logs/steady.log" \
		sm "$PY" "$HERE/steady.py" 4.5 2.7 >"$d/steady.out" ||
		fail "fixture: steady.py failed"
	wait "$pid" || fail "fixture: steady.py (rotated) failed"
	touch "$d/done"
}
