# A batch of close records still being written when the process ends.  The
# log is rotated (max_size), so processes sharing it take turns under a
# flock on it; here another process holds that lock for good, the way a
# writer stuck behind others' rotations waits (a helper's run: three
# processes sharing a log rotated at 4 KiB, whose exits gave up on their
# last batch after 2 s on two loaded cores).  A python3 program closes 10
# socketpair ends (written), then 200 more while the log is locked, waits
# for a tick to take them into a batch that waits for the lock, and then:
#  - exit: the exit waits 2 s for that batch, which does not move, and
#    gives up: exit status 0 within 8 s, one warning on stderr naming the
#    log, and the state file marked so that recovery writes its exit
#    record as "end":"exit-recovered".
#  - kill: SIGKILL.
# Once the lock is let go, `sockmeter recover` writes the exit record: the
# close records in the log plus its close_records_dropped equal its
# fds_closed, with close records dropped (the batch was in flight).
# Before, the batch's records were in no count (dropped 0, 200 missing)
# and an exit that gave up was recovered as "killed".
. "$(dirname "$0")/lib.sh"

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json SOCKMETER_LOG_MAX_SIZE=1M
mkdir -p "$T/state"
chmod 700 "$T/state"

cat >"$T/v.py" <<'PYEOF'
import os, socket, sys, time
def churn(n):
    for i in range(n):
        a, b = socket.socketpair()
        a.send(b"x" * 100)
        b.recv(1000)
        a.close()
        b.close()
churn(5)
print("phase1", os.getpid(), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
churn(100)
time.sleep(2.5)  # ticks: the batch takes them, and waits for the lock
print("flight", flush=True)
if sys.argv[2] == "exit":
    sys.exit(0)
time.sleep(60)
PYEOF
# Holds an exclusive flock on the log until the release file appears.
cat >"$T/locker.py" <<'PYEOF'
import fcntl, os, sys, time
f = open(sys.argv[1], "a")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)
PYEOF

# closes_at_least N LOG - LOG holds N close records or more (it may not
# be there yet).
closes_at_least() {
	local n
	n=$(cat "$2" 2>/dev/null | grep -c '"type":"close"')
	[ "${n:-0}" -ge "$1" ]
}

for mode in exit kill; do
	log=$T/$mode.log
	rm -f "$T/go" "$T/locked" "$T/release"
	SOCKMETER_LOG=$log bg_start env LD_PRELOAD="$LIB" "$PY" "$T/v.py" "$T/go" "$mode" \
		>"$T/$mode.out" 2>"$T/$mode.err"
	vbg=$BG_PID
	wait_for 10 grep -q '^phase1' "$T/$mode.out" || fail "$mode: the program did not start"
	vpid=$(awk '/^phase1/ { print $2 }' "$T/$mode.out")
	# Its first 10 close records are in the log before the lock.
	wait_for 10 closes_at_least 10 "$log" ||
		fail "$mode: the first close records were not written"
	/usr/bin/python3 "$T/locker.py" "$log" "$T/locked" "$T/release" &
	lpid=$!
	wait_for 10 test -e "$T/locked" || fail "$mode: the log was not locked"
	touch "$T/go"
	wait_for 20 grep -q '^flight' "$T/$mode.out" || fail "$mode: the program did not churn"
	if [ "$mode" = exit ]; then
		t0=$(sm_now_ms)
		bg_wait "$vbg" 20 || fail "exit: status $? ($(cat "$T/exit.err"))"
		ms=$(($(sm_now_ms) - t0))
		[ "$ms" -lt 8000 ] || fail "exit: took $ms ms with the log locked"
		grep -q "^sockmeter: log $log: a batch was still being written" "$T/exit.err" ||
			fail "exit: no warning: $(cat "$T/exit.err")"
		[ "$(grep -c . "$T/exit.err")" = 1 ] || fail "exit: stderr: $(cat "$T/exit.err")"
	else
		kill -KILL "$vpid"
		wait "$vbg" 2>/dev/null
	fi
	touch "$T/release"
	wait "$lpid"
	"$launcher" recover "$T/state" 2>"$T/rec.$mode" || fail "$mode: recover: $(cat "$T/rec.$mode")"
	out=$("$PY" - "$log" "$vpid" "$mode" 2>&1 <<'PYEOF'
import json, sys
log, pid, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
closes, ex = 0, []
for line in open(log):
    r = json.loads(line)
    if r["pid"] != pid:
        continue
    if r["type"] == "close":
        closes += len(r["fds"])
    elif r["type"] == "exit":
        ex.append(r)
assert len(ex) == 1, "%d exit records" % len(ex)
e = ex[0]
t = e["totals"]
want = "exit-recovered" if mode == "exit" else "killed"
assert e.get("end") == want, ("end", e.get("end"), want)
d = t.get("close_records_dropped", 0)
assert t["fds_closed"] >= 210, t["fds_closed"]
assert closes + d == t["fds_closed"], (closes, d, t["fds_closed"])
assert d > 0, ("nothing was in flight: the test tested nothing", closes, t["fds_closed"])
print(mode, "close records", closes, "dropped", d, "fds_closed", t["fds_closed"])
PYEOF
) || fail "$mode: $(printf '%s\n' "$out" | tail -n 1)"
	echo "$out"
done
exit 0
