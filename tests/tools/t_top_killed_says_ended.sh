# sockmeter top names a process whose exit record recovery wrote as
# sockmeter-report does: "ended: killed", not "exited" (a helper's sweep:
# a uwsgi router killed by its master read "exited" in top and "ended:
# killed" in the report).  python3 moves 500 bytes over a socketpair,
# writes an interval record, and kills itself; sockmeter-recover writes
# its exit record into the log.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/state"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2
SOCKMETER_LOG=$T/k.log sm "$PY" -c 'import os, signal, socket, time
a, b = socket.socketpair()
a.send(b"x" * 500)
b.recv(500)
time.sleep(0.5)
os.kill(os.getpid(), signal.SIGKILL)' 2>/dev/null
grep -q '"type":"interval"' "$T/k.log" || fail "no interval record: $(cat "$T/k.log")"
"$SM_BUILD/sockmeter-recover" -q 2>"$T/rec.err" || fail "recover failed: $(cat "$T/rec.err")"
grep -q '"end":"killed"' "$T/k.log" || fail "no recovered exit record: $(cat "$T/rec.err")"
"$TOPCMD" --once "$T/k.log" >"$T/top.out" 2>&1 || fail "top failed: $(cat "$T/top.out")"
grep -Eq '^python3 +[0-9]+ .* 500 +500 +2 +ended: killed$' "$T/top.out" ||
	fail "top: $(cat "$T/top.out")"
"$REPORT" -f csv "$T/k.log" 2>/dev/null | grep -q ',ended: killed,' ||
	fail "the report does not say it either"
