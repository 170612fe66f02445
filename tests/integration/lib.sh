# lib.sh - the integration tests' helpers; sourced by every t_*.sh.
#
# The harness itself (fail, $T, sm, bg_start, polling waits...) is the one
# both suites share, tests/lib.sh: see there.  Below are what only the
# integration tests use: reading logs (logq.py), an HTTP server, socat
# transfers, the list of wrapped calls.  Background processes are bounded
# to 60 s here.

SM_SUITE=it
SM_BG_LIMIT=60
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
HERE=$SM_TOP/tests/integration
LOGQ=("$PY" "$HERE/logq.py")

# Every test proves the preload saw every TCP byte: after it passed, each
# sockmeter log it left under $T must show 0 unseen bytes (tcp_info: the
# kernel's count agrees with ours) in the close record of every TCP
# connection (unseen.py).  A test
# whose program moves bytes a preload cannot see sets SM_UNSEEN_OK=1.
# (sm_cleanup in tests/lib.sh calls sm_suite_check after a test passed.)
sm_check_unseen() {
	local out
	[ -s "$SM_REASON" ] || [ -n "${SM_UNSEEN_OK:-}" ] && return 0
	out=$("$PY" "$HERE/unseen.py" "$T" 2>&1) ||
		printf 'bytes the preload did not see: %s\n' "$out" >"$SM_REASON"
}
sm_suite_check() {
	sm_check_unseen
}

# wrapped_calls - the names of every wrapped call, one a line, sorted: the
# X-macro list SM_REAL_FUNCS of preload/preload.h, through the compiler's
# preprocessor (so a group header's new calls are in it at once).
wrapped_calls() {
	printf '#include "preload.h"\n#define X(name, ret, args) SM_CALL name\nSM_REAL_FUNCS(X)\n' |
		"${CC:-cc}" -E -P -D_GNU_SOURCE -I"$SM_TOP/preload" \
			$(pkg-config --cflags inih 2>/dev/null) -x c - 2>"$T/cpp.err" |
		grep -o 'SM_CALL [A-Za-z0-9_]*' | awk '{ print $2 }' | sort -u
	[ -s "$T/cpp.err" ] && fail "preprocessing preload/preload.h: $(head -n 3 "$T/cpp.err")"
	return 0
}

# syslog_listen SOCK OUT - a syslog socket of the test's own at SOCK (for
# SOCKMETER_SYSLOG): each datagram it gets becomes a line of OUT; it ends
# after 20 s without one.  Returns once it listens.
syslog_listen() {
	cat >"$T/syslog_listen.py" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
with open(sys.argv[2], "w") as out:
    while True:
        try:
            m = s.recv(4096)
        except socket.timeout:
            break
        out.write(m.decode("utf-8", "replace") + "\n")
        out.flush()
PYEOF
	bg_start "$PY" "$T/syslog_listen.py" "$1" "$2"
	wait_socket "$1" "$BG_PID" 10 || fail "the syslog listener did not start"
}

# own_user SALT - a uid of the test's own in U (61000 + (pid + SALT) mod
# 4000: tests that run at once take different ones), its default log
# directory in DIR (removed now and when the test ends), and as_u, the
# setpriv prefix that runs a command as U; $T is opened to it and the test
# goes on from /tmp.  Needs root and setpriv (the caller checks).
own_user() {
	U=$((61000 + ($$ + $1) % 4000))
	DIR=/tmp/sockmeter-$U
	# shellcheck disable=SC2064
	trap "rm -rf '$DIR'; sm_cleanup" EXIT
	rm -rf "$DIR"
	chmod 755 "$T"
	as_u=(setpriv --reuid="$U" --regid="$U" --clear-groups)
	cd /tmp || fail "cd /tmp"
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

# run_signal_prog PROG MIN_SIGNALS ARG... - run build/progs/PROG ARG...
# preloaded (SOCKMETER_* from the caller), output in $T/out and $T/err; it
# must end (a timeout is a deadlock), succeed, write nothing on stderr and
# report at least MIN_SIGNALS handler runs (signals=N).
run_signal_prog() {
	local prog=$1 min=$2 st sigs
	shift 2
	need_prog "$prog"
	sm "$PROGS/$prog" "$@" >"$T/out" 2>"$T/err"
	st=$?
	[ "$st" = 124 ] && fail "$prog timed out: a deadlock (a handler waiting for what it interrupted?)"
	[ "$st" = 0 ] || fail "$prog failed ($st): $(tail -n 3 "$T/err")"
	[ -s "$T/err" ] && fail "stderr: $(head -n 3 "$T/err")"
	sigs=$(field signals "$T/out")
	[ "$sigs" -ge "$min" ] || fail "only $sigs signals handled: the test did not test much"
}

# sigexit_ends_3 WHY CALL HANDLER END - run tests/progs/sigexit CALL HANDLER
# END under the preload, where it ends with status 3 (WHY says why), and
# its own exit record must hold what its peer saw moved.
sigexit_ends_3() {
	local why=$1 n=$2-$3-$4 st moved pid
	shift
	SOCKMETER_LOG=$T/$n.%p.log SOCKMETER_FORMAT=json \
		sm "$PROGS/sigexit" "$@" >"$T/$n.out" 2>"$T/$n.err"
	st=$?
	expect_eq "$n: exit status ($why)" "$st" 3
	sigexit_peer "$T/$n.out"
	moved=$(field moved "$T/$n.out")
	pid=$(field pid "$T/$n.out")
	[ "$moved" -gt 0 ] || fail "$n: nothing moved"
	expect_moved "$n: exit record" "$(one_log "$T/$n.$pid.log")" "$1" "$moved"
}

# make_file PATH BYTES - a file of BYTES random bytes.
make_file() {
	head -c "$2" /dev/urandom >"$1" || fail "cannot make $1"
	[ "$(stat -c %s "$1")" = "$2" ] || fail "short file $1"
}

# killme_py FILE - writes a python3 program that moves 1,000 bytes over a
# loopback TCP connection (one end sends, the other reads them all) and
# kills itself with SIGKILL: a killed process whose one connection's bytes
# are known, for root's recovery to write.
killme_py() {
	cat >"$1" <<'PYEOF'
import os, signal, socket
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
c = socket.create_connection(l.getsockname())
s, _ = l.accept()
c.sendall(b"x" * 1000)
got = 0
while got < 1000:
    got += len(s.recv(65536))
os.kill(os.getpid(), signal.SIGKILL)
PYEOF
}

# recovered_killed WHAT LOGGLOB TOTAL SLACK - after a sender was killed
# mid-transfer: `sockmeter recover` on $T/state, and the one log matching
# LOGGLOB must hold an exit record marked killed whose bytes_out is at most
# TOTAL (what the receiver got) and short of it by SLACK at most (the call
# the kill interrupted).
recovered_killed() {
	local log got
	"$SM_TOP/scripts/sockmeter" recover -q "$T/state" 2>"$T/recover.err" ||
		fail "$1: recover: $(cat "$T/recover.err")"
	log=$(one_log "$2")
	expect_eq "$1: end" "$(q "$log" "E['end']")" killed
	got=$(q "$log" "tot('bytes_out')")
	[ "$got" -le "$3" ] && [ $(($3 - got)) -le "$4" ] ||
		fail "$1: recovered bytes_out $got, the receiver got $3"
	echo "$1: the receiver got $3, recovered $got ($(($3 - got)) in the call under way)" >&2
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

# pipe_was_stuck FD - the pipe or FIFO this shell holds open on FD, which
# nobody read, must hold sockmeter's records and be nearly full (60 KiB of
# its 64 KiB): the library's write into it really did block.  A test that
# needs a stuck log proves nothing without it (a library that wrote nothing
# never gets stuck).
pipe_was_stuck() {
	local got
	got=$(python3 -c '
import os, sys
fd = int(sys.argv[1])
os.set_blocking(fd, False)
data = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        break
    if not chunk:
        break
    data += chunk
print(len(data), int(b"sockmeter" in data))' "$1") ||
		fail "cannot read what is left in fd $1"
	case $got in
	*" 1") [ "${got% *}" -ge 61440 ] ||
		fail "the log pipe held only ${got% *} bytes: the write never blocked" ;;
	*) fail "no sockmeter record in the log pipe (${got% *} bytes)" ;;
	esac
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

# start_echo - a TCP echo server (socat, not preloaded, a process per
# connection) on 127.0.0.1 and a free port; sets ECHO_PORT.
start_echo() {
	local try
	command -v socat >/dev/null || fail "socat is not installed"
	for try in 1 2 3; do
		ECHO_PORT=$(free_port)
		bg_start socat "TCP-LISTEN:$ECHO_PORT,bind=127.0.0.1,reuseaddr,fork" EXEC:cat
		wait_listen "$ECHO_PORT" "$BG_PID" 10 && return 0
		kill "$BG_PID" 2>/dev/null
	done
	fail "the echo server did not start"
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

# apache_start MPM USER LOGFORMAT [DIRECTIVES] - real apache2 (Debian's
# enabled modules but mod_php, which refuses a threaded MPM, and the MPM
# module MPM: event, prefork), started as a
# preloaded daemon (apache2 -k start) on a free port, serving $T/www as
# USER, its access log $T/access.log in LOGFORMAT, DIRECTIVES (lines) in
# its config; tries 3 ports.  Sets port and daemon (the pid), and a trap
# that kills what is left of it.  The ab client: apache_ab N C.
apache_start() {
	local mpm=$1 user=$2 fmt=$3 extra=${4:-} try
	for try in 1 2 3; do
		port=$(free_port)
		cat >"$T/apache.conf" <<CONF
ServerRoot /etc/apache2
LoadModule mpm_${mpm}_module /usr/lib/apache2/modules/mod_mpm_${mpm}.so
$(ls /etc/apache2/mods-enabled/*.load /etc/apache2/mods-enabled/*.conf 2>/dev/null |
	grep -v -e 'mpm_' -e '/php[0-9.]*\.\(load\|conf\)$' | sed 's/^/Include /')
Listen 127.0.0.1:$port
PidFile $T/apache.pid
ErrorLog $T/error.log
Mutex file:$T default
DefaultRuntimeDir $T
User $user
Group #$(id -g "$user")
$extra
DocumentRoot $T/www
<Directory $T/www>
	Require all granted
</Directory>
LogFormat "$fmt" bytes
CustomLog $T/access.log bytes
CONF
		timeout 20 env LD_PRELOAD="$LIB" /usr/sbin/apache2 -f "$T/apache.conf" -k start \
			>"$T/start.out" 2>&1 || fail "apache2 -k start: $(cat "$T/start.out")"
		# The listener is open before the daemon writes its pid file.
		wait_for 10 is_listening "$port" && wait_for 10 test -s "$T/apache.pid" &&
			break
		[ -f "$T/apache.pid" ] && kill "$(cat "$T/apache.pid")" 2>/dev/null
	done
	[ -f "$T/apache.pid" ] || fail "apache2 did not start: $(tail -n 3 "$T/error.log")"
	daemon=$(cat "$T/apache.pid")
	trap 'kill -9 $(pgrep -P "$daemon") "$daemon" 2>/dev/null; sm_cleanup' EXIT
}

# apache_ab N C - N requests for /f, C at once (ab, no keep-alive): all
# complete, none failed.
apache_ab() {
	timeout 60 ab -q -n "$1" -c "$2" "http://127.0.0.1:$port/f" >"$T/ab.out" 2>&1 ||
		fail "ab failed (the daemon made no worker?): $(tail -n 3 "$T/ab.out")"
	grep -q "^Complete requests: *$1" "$T/ab.out" || fail "ab: $(grep -i requests "$T/ab.out")"
	grep -q "^Failed requests: *0" "$T/ab.out" || fail "ab saw failed requests"
}
