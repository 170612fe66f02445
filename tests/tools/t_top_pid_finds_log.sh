# "sockmeter top PID" finds a running process's log: (a) where the
# SOCKMETER_LOG in its environment says, (b) with no SOCKMETER_LOG, at the
# default /tmp/sockmeter-UID/PROG.PID.log; the table shows that process's
# connection and peer.  Both programs run at once.  A log an earlier
# process with the same pid left in the default directory is not followed.
. "$(dirname "$0")/lib.sh"
need socat
mkdir -p "$T/logs"
pa=$(free_port)
pb=$(free_port)
bg_start socat -u "TCP-LISTEN:$pa,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
bg_start socat -u "TCP-LISTEN:$pb,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
# env execs python3: $BG_PID is the metered process's pid
bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	SOCKMETER_LOG="$T/logs/%n.%p.log" \
	"$PY" "$HERE/pace.py" 127.0.0.1 "$pa" 300000 200000
pa_pid=$BG_PID
bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	"$PY" "$HERE/pace.py" 127.0.0.1 "$pb" 300000 200000
pb_pid=$BG_PID
default_log=/tmp/sockmeter-$(id -u)/python3.$pb_pid.log
# An earlier process that had the same pid left its log there (a postfix
# "cleanup" once did, and CI's top showed both): not this process's.
stale_log=/tmp/sockmeter-$(id -u)/oldprog.$pb_pid.log
trap 'sm_cleanup; rm -f "$default_log" "$stale_log"' EXIT
printf '{"type":"close","ts":1,"pid":%s,"prog":"oldprog","start":1,"fds":[{"fd":8,"kind":"tcp","local":"10.9.9.9:1","peer":"10.9.9.9:2","bytes_in":5,"calls_in":1,"bytes_out":0,"calls_out":0,"opened":1,"last_active":1,"closed":1,"duration":0.0}]}\n' \
	"$pb_pid" >"$stale_log"
touch -d '-1 hour' "$stale_log"
# top_once OUT CMD... - run a top command into OUT; true when its table
# has the python3 row wanted ($want), polled until the log has a record
# listing the connection (no fixed wait).
top_once() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 && grep -Eq "$want" "$out"
}
want="^python3 +$pa_pid +[0-9]+ tcp +127\\.0\\.0\\.1:$pa "
wait_for 10 top_once "$T/a.out" "$TOPCMD" --once "$pa_pid" ||
	fail "top $pa_pid (SOCKMETER_LOG): $(cat "$T/a.out")"
# top shows a live process from its state file before its first record
# is written; the header names the log once the log exists.
wait_for 10 test -s "$default_log" || fail "no log at $default_log"
want="^python3 +$pb_pid +[0-9]+ tcp +127\\.0\\.0\\.1:$pb "
wait_for 10 top_once "$T/b.out" "$LAUNCHER" top --once "$pb_pid" ||
	fail "top $pb_pid (default path): $(cat "$T/b.out")"
grep -q "pid $pb_pid ($default_log)" "$T/b.out" || fail "header does not name the log: $(head -1 "$T/b.out")"
! grep -q "$pa_pid" "$T/b.out" || fail "top $pb_pid shows the other process"
exit 0
