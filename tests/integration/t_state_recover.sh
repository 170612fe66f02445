# sockmeter recover runs once per dead process, however many run at once:
#  - 6 processes killed with SIGKILL, then 4 recovers at the same time,
#    then a 5th: each log has exactly one exit record, with its exact
#    totals, and no state file is left;
#  - automatic recovery: a killed process's records are written by the
#    ticker of the next metered process of the same user, about a second
#    after it starts, with nobody running recover;
#  - killed while the ticker is mid-write: 2000 open socketpairs, an
#    interval record of all of them every 0.1 s, SIGKILL at 8 different
#    moments; every time the recovered exit record is exact, and a torn
#    record the ticker was writing is ended so the next line is whole;
#  - a recoverer killed after writing a process's records, before removing
#    the file it claimed: the recover that takes the claim over writes
#    nothing twice.
. "$(dirname "$0")/lib.sh"

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -p "$T/logs"

cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
nbytes, npairs = int(sys.argv[1]), int(sys.argv[2])
keep = []
for i in range(npairs):
    a, b = socket.socketpair()
    a.sendall(b"x" * nbytes)
    n = 0
    while n < nbytes:
        n += len(b.recv(1 << 20))
    keep.append((a, b))
print("ready", os.getpid(), flush=True)
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 60)
PYEOF

# victim NAME BYTES PAIRS - start one, wait until ready; sets VPID
victim() {
	SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" \
		"$PY" "$T/victim.py" "$2" "$3" >"$T/$1.out"
	local i=0
	until grep -q '^ready' "$T/$1.out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt 1000 ] && fail "$1 did not start"
		sleep 0.02
	done
	VPID=$(awk '/^ready/ { print $2 }' "$T/$1.out")
}

# --- concurrent recovers -------------------------------------------------
pids=()
for i in 1 2 3 4 5 6; do
	victim "v$i" $((1000 * i + 7)) 1
	pids+=("$VPID")
done
expect_eq "state files" "$(ls "$T/state" | grep -c '\.state$')" 6
for p in "${pids[@]}"; do kill -KILL "$p"; done
for p in "${pids[@]}"; do
	while kill -0 "$p" 2>/dev/null; do sleep 0.02; done
done
# The state turned off ([state] enabled = false in the config, the ini's
# dir naming this very directory): the library would use no directory, so
# a recover without DIR has none and says so, status 0, and these dead
# processes' files stay for the recovers below (before, it recovered the
# directory all the same).
printf '[state]\nenabled = false\ndir = %s\n' "$T/state" >"$T/off.ini"
SOCKMETER_STATE= SOCKMETER_CONFIG=$T/off.ini "$launcher" recover 2>"$T/recoff" ||
	fail "recover, state off: status $?"
grep -q 'the state is off' "$T/recoff" || fail "recover, state off: $(cat "$T/recoff")"
expect_eq "state files after a recover with the state off" \
	"$(ls "$T/state" | grep -c '\.state$')" 6
rp=()
for i in 1 2 3 4; do
	"$launcher" recover -q "$T/state" 2>"$T/rec$i" &
	rp+=($!)
done
for p in "${rp[@]}"; do wait "$p" || fail "a recover failed"; done
"$launcher" recover "$T/state" 2>"$T/rec5" || fail "recover: $(cat "$T/rec5")"
grep -q ': 0 recovered' "$T/rec5" || fail "the 5th recover found work: $(cat "$T/rec5")"
for i in 1 2 3 4 5 6; do
	log=$(one_log "$T/logs/v$i.*.log")
	expect_eq "v$i: exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
	expect_eq "v$i: bytes_out" "$(q "$log" "tot('bytes_out')")" $((1000 * i + 7))
	expect_eq "v$i: end" "$(q "$log" "E['end']")" killed
done
expect_eq "state files left" "$(ls "$T/state" | grep -c 'state')" 0

# --- automatic recovery by the next metered process ----------------------
victim auto 4242 1
kill -KILL "$VPID"
while kill -0 "$VPID" 2>/dev/null; do sleep 0.02; done
# A directory is scanned at most once in 10 s, whoever scans it: the
# victims above, alive more than a second on a loaded machine, scanned it
# already (the lock's mtime says when), the next process's first scan
# (a second after its start) was then skipped, and its second comes a
# minute later (it failed so under load).  The last scan is made older.
touch -d '-2 minutes' "$T/state/.recover.lock"
# (It lives until the victim's exit record is there, 20 s at most, and
# then exits: a fixed 3 s were too short on a loaded machine.)
SOCKMETER_LOG=$T/logs/next.%p.log sm "$PY" -c '
import glob, socket, sys, time
a, b = socket.socketpair()
end = time.time() + 20
while time.time() < end and not any(
        "\"type\":\"exit\"" in open(f).read()
        for f in glob.glob(sys.argv[1])):
    time.sleep(0.1)' "$T/logs/auto.*.log" >/dev/null ||
	fail "the next process failed"
log=$(one_log "$T/logs/auto.*.log")
expect_eq "auto: exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
expect_eq "auto: bytes_in" "$(q "$log" "tot('bytes_in')")" 4242
expect_eq "state files left" "$(ls "$T/state" | grep -c 'state')" 0

# --- a recoverer killed after writing, before removing its claim ----------
# Its records are in the log; the claim (NAME.state.rec-PID, PID dead) is
# taken over by the next recover, which must not write them again.  Made
# here without a race: the state file as it was before the first recover,
# put back under a dead recoverer's claim name afterwards.  JSON and text.
dead=$(sh -c 'echo $$')
for fmt in json text; do
	SOCKMETER_FORMAT=$fmt victim "again-$fmt" 3333 1
	kill -KILL "$VPID"
	while kill -0 "$VPID" 2>/dev/null; do sleep 0.02; done
	f=$(ls "$T/state" | grep '\.state$')
	cp --preserve=all --sparse=always "$T/state/$f" "$T/saved.state"
	"$launcher" recover -q "$T/state" 2>"$T/recagain" || fail "recover: $(cat "$T/recagain")"
	mv "$T/saved.state" "$T/state/$f.rec-$dead"
	"$launcher" recover "$T/state" 2>"$T/recagain" || fail "recover: $(cat "$T/recagain")"
	grep -q ': 0 recovered, 1 removed' "$T/recagain" ||
		fail "$fmt: the dead recoverer's claim: $(cat "$T/recagain")"
	log=$(one_log "$T/logs/again-$fmt.*.log")
	expect_eq "$fmt: exit records after a takeover" \
		"$(grep -c 'sockmeter exit\|"type":"exit"' "$log")" 1
	expect_eq "state files left" "$(ls "$T/state" | grep -c 'state')" 0
done

# --- killed while the ticker writes --------------------------------------
for k in 1 2 3 4 5 6 7 8; do
	SOCKMETER_INTERVAL=0.1 SOCKMETER_TOP=0 victim "mid$k" 100 2000
	sleep "0.$((k * 7 % 10))$k"
	kill -KILL "$VPID"
	while kill -0 "$VPID" 2>/dev/null; do sleep 0.02; done
	"$launcher" recover -q "$T/state" 2>"$T/recmid" || fail "recover: $(cat "$T/recmid")"
	log=$(one_log "$T/logs/mid$k.*.log")
	"$PY" - "$log" >"$T/mid.check" 2>&1 <<'PYEOF' || fail "mid$k: $(cat "$T/mid.check")"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "the log does not end with a newline"
recs, torn = [], 0
for l in lines[:-1]:
    try:
        recs.append(json.loads(l))
    except ValueError:
        torn += 1
assert torn <= 1, "%d torn lines" % torn
e = recs[-1]
assert e["type"] == "exit" and e.get("end") == "killed", e["type"]
assert e["totals"]["bytes_out"] == 200000, e["totals"]["bytes_out"]
assert e["totals"]["bytes_in"] == 200000, e["totals"]["bytes_in"]
assert e["totals"]["fds_open"] == 4000, e["totals"]["fds_open"]
print("torn", torn)
PYEOF
done
expect_eq "state files left" "$(ls "$T/state" | grep -c 'state')" 0
exit 0
