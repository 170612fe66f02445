# Processes in a time namespace with a boottime offset (`unshare -T
# --boottime`, as CRIU and some container runtimes make them) share the
# state directory with the others.  /proc shows every start time shifted
# by its reader's offset, so before, a recovery in one view took the live
# processes of the other for dead: a second exit record "killed" and the
# live file removed (a helper's sweep of containers).  Start times are now
# kept in the initial namespace's terms:
#  - a host process alive while one in the namespace runs (whose
#    automatic recovery scans the directory): each has one exit record of
#    its own, exact;
#  - a process in the namespace alive while the host runs `sockmeter
#    recover`: counted as running, no record written for it;
#  - a host process older than a namespace of a negative offset (its
#    start time wraps there), while a recovery runs in it: counted as
#    running;
#  - one killed in the namespace: the host's recovery writes its exit
#    record ("killed"), exact.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (a time namespace)"
unshare -T --boottime 100000 true 2>/dev/null ||
	skip "no time namespaces here (unshare -T --boottime)"
mkdir -p "$T/state" "$T/log"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
cat >"$T/tn.py" <<'PYEOF'
import socket, sys, time
secs, ready = float(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else ""
a, b = socket.socketpair()
a.sendall(b"x" * 1000); b.recv(1000)
if ready:
    open(ready, "w").close()
time.sleep(secs)
a.sendall(b"y" * 500); b.recv(500)
PYEOF

# in_ns CMD...: CMD preloaded, in a time namespace whose boot was 100,000
# s earlier (-f: a new time namespace is its maker's children's, not its
# own).
in_ns() {
	timeout 30 unshare -T --boottime 100000 -f env LD_PRELOAD="$LIB" "$@"
}

SOCKMETER_LOG=$T/log/host.%p.log bg_start env LD_PRELOAD="$LIB" "$PY" "$T/tn.py" 5
host=$BG_PID
SOCKMETER_LOG=$T/log/ns.%p.log in_ns "$PY" "$T/tn.py" 2.5 ||
	fail "the run in the time namespace failed"
bg_wait "$host" 20 || fail "the host process failed"
for who in host ns; do
	log=$(one_log "$T/log/$who.*.log")
	check "$log" 'len([r for r in R if r["type"] == "exit"]) == 1' "$who: exit records"
	check "$log" '"end" not in E' "$who: the exit record is its own"
	expect_eq "$who: bytes_out" "$(q "$log" "tot('bytes_out')")" 1500
done

# Alive in the namespace while the host recovers.
SOCKMETER_LOG=$T/log/alive.%p.log in_ns "$PY" "$T/tn.py" 3 "$T/ready1" &
apid=$!
wait_for 20 test -e "$T/ready1" || fail "the run in the namespace did not start"
"$SM_TOP/scripts/sockmeter" recover "$T/state" 2>"$T/rec1.err" ||
	fail "recover: $(cat "$T/rec1.err")"
grep -q " 1 still running" "$T/rec1.err" ||
	fail "the live process in the namespace was not counted as running: $(cat "$T/rec1.err")"
wait "$apid" || fail "the live run in the namespace failed"
log=$(one_log "$T/log/alive.*.log")
check "$log" 'len([r for r in R if r["type"] == "exit"]) == 1' "alive: exit records"
check "$log" '"end" not in E' "alive: the exit record is its own"

# A host process older than a namespace whose offset is negative and
# larger than its start (CRIU restoring on a host up longer): /proc there
# wraps its start time; a recovery there still counts it as running.
SOCKMETER_LOG=$T/log/old.%p.log bg_start env LD_PRELOAD="$LIB" "$PY" "$T/tn.py" 6 "$T/ready3"
old=$BG_PID
wait_for 20 test -e "$T/ready3" || fail "the old host process did not start"
# An offset of 2 s less than the uptime: larger than the process's start,
# more than 3 s ago.
sleep 3
up=$(cut -d. -f1 /proc/uptime)
timeout 20 unshare -T --boottime "-$((up - 2))" -f \
	"$SM_TOP/scripts/sockmeter" recover "$T/state" 2>"$T/rec3.err" ||
	fail "recover in a namespace of negative offset: $(cat "$T/rec3.err")"
grep -q " 1 still running" "$T/rec3.err" ||
	fail "a host process was taken for dead under a negative offset: $(cat "$T/rec3.err")"
bg_wait "$old" 20 || fail "the old host process failed"
log=$(one_log "$T/log/old.*.log")
check "$log" 'len([r for r in R if r["type"] == "exit"]) == 1' "old: exit records"

# Killed in the namespace: the host's recovery writes its record.
SOCKMETER_LOG=$T/log/k.%p.log in_ns "$PY" "$T/tn.py" 60 "$T/ready2" &
wait_for 20 test -e "$T/ready2" || fail "the run to kill did not start"
pkill -KILL -f "$T/tn.py 60" || fail "nothing to kill"
wait_for 10 eval '! pgrep -f "$T/tn.py 60" >/dev/null' || fail "the killed run lives on"
sleep 0.2
recovered_killed "killed in the namespace" "$T/log/k.*.log" 1000 0
exit 0
