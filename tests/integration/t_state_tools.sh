# The tools read state files (issue 8):
#  - sockmeter top PID shows a running process's counters before it wrote
#    any record (interval 60 s, no log yet);
#  - sockmeter-report --state counts a running process's counters now, and
#    a killed, not yet recovered process's final numbers (state "ended:
#    unrecovered", a duration that does not grow while it stays dead, the
#    one recovery then gives); after sockmeter recover, the log alone gives
#    the same numbers (state "ended: killed"), and --state adds nothing
#    twice.
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
report=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter-report
# No close records: the victim's two closes would be written within about
# a second (sooner when its ticker's first look comes after them), and a
# loaded machine reached the "no log yet" check later than that.
export SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json \
	SOCKMETER_CLOSE_RECORDS=off \
	SOCKMETER_INTERVAL=60
mkdir -p "$T/logs"
cat >"$T/victim.py" <<'PYEOF'
import os, socket, time
c, d = socket.socketpair()
c.close(); d.close()  # two closes, no bytes
a, b = socket.socketpair()
a.sendall(b"x" * 54321)
n = 0
while n < 54321:
    n += len(b.recv(65536))
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
SOCKMETER_LOG=$T/logs/%p.log bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" >"$T/out"
i=0
until grep -q '^ready' "$T/out"; do
	i=$((i + 1)); [ "$i" -gt 500 ] && fail "victim did not start"; sleep 0.02
done
vpid=$(awk '/^ready/ { print $2 }' "$T/out")
log=$T/logs/$vpid.log
[ ! -e "$log" ] || fail "a record was written already"

"$top" top --once "$vpid" >"$T/top" 2>&1 || fail "top: $(cat "$T/top")"
grep -qE "^python3 +$vpid .* 53\.0K +53\.0K +2 " "$T/top" ||
	fail "top does not show the live counters: $(cat "$T/top")"

rep() { # STATE-OPTION... : "state bytes_in bytes_out fds_closed" of the one process
	"$report" -f json "$@" "$log" >"$T/rep.json" 2>"$T/rep.err" ||
		fail "report: $(cat "$T/rep.err")"
	"$PY" -c 'import json, sys
p = json.load(open(sys.argv[1]))["processes"]
assert len(p) == 1, p
print(p[0]["state"], p[0]["bytes_in"], p[0]["bytes_out"], p[0]["fds_closed"])' "$T/rep.json"
}
expect_eq "report --state, running" "$(rep --state "$T/state")" "no exit record 54321 54321 2"
kill -KILL "$vpid"
while kill -0 "$vpid" 2>/dev/null; do sleep 0.02; done
expect_eq "report --state, killed" "$(rep --state "$T/state")" "ended: unrecovered 54321 54321 2"
# A dead process's life ends when it was last seen alive, however late the
# report reads it (before, each reading made it longer), and recovery says
# the same.
dur() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["duration"])' "$T/rep.json"; }
dead1=$(dur)
[ -n "$dead1" ] || fail "no duration in the report"
sleep 1.5
rep --state "$T/state" >/dev/null
expect_eq "report --state, killed: its duration 1.5 s later" "$(dur)" "$dead1"
"$top" recover -q "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
expect_eq "report, recovered" "$(rep)" "ended: killed 54321 54321 2"
expect_eq "report, recovered: the duration --state gave" "$(dur)" "$dead1"
expect_eq "report --state, recovered" "$(rep --state "$T/state")" "ended: killed 54321 54321 2"
exit 0
