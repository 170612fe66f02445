# Durable state: a process that dies without writing its final records
# (SIGKILL, SIGTERM with the default action) has them written by
# `sockmeter recover`, exact, from its state file; then the file is gone.
#  - SIGTERM: a python3 program that moved known bytes over two socketpairs
#    (one closed, one still open) and then waits; its recovered exit record
#    is marked "end":"killed", holds the totals and lists the open fds,
#    last active before the death (not at the recovery, 1.5 s later), and
#    says when it was last seen alive (alive_until), where
#    sockmeter-report ends its duration.
#  - SIGKILL in the middle of a 1 GB TCP transfer by socat (64 KiB
#    writes): the victim's recovered bytes_out equals what the receiver
#    got, up to the one write in flight when the signal landed (its bytes
#    reached the socket, its return was never seen: at most 65,536 less).
. "$(dirname "$0")/lib.sh"

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -p "$T/logs"

# wait_line FILE PATTERN - until FILE has a line matching PATTERN (10 s).
wait_line() {
	local i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt 500 ] && fail "no '$2' in $1 after 10 s"
		sleep 0.02
	done
}

# victim_start NAME SCRIPT - SCRIPT metered in the background, its log
# $T/logs/NAME.PID.log; once it says "ready PID", its pid in VPID.
victim_start() {
	SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" "$PY" "$2" >"$T/$1.out"
	wait_line "$T/$1.out" '^ready'
	VPID=$(awk '/^ready/ { print $2 }' "$T/$1.out")
}

# --- SIGTERM, default action ---------------------------------------------
cat >"$T/victim.py" <<'PYEOF'
import os, socket, time
a, b = socket.socketpair()
a.sendall(b"x" * 123456)
n = 0
while n < 123456:
    n += len(b.recv(65536))
c, d = socket.socketpair()
c.sendall(b"y" * 7777)
m = 0
while m < 7777:
    m += len(d.recv(65536))
c.close(); d.close()
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
victim_start term "$T/victim.py"
vpid=$VPID
[ "$(ls "$T/state")" = "$vpid-$(awk '{ print $22 }' /proc/"$vpid"/stat).state" ] ||
	fail "state file: $(ls "$T/state")"
"$launcher" recover "$T/state" 2>"$T/rec0" || fail "recover: $(cat "$T/rec0")"
grep -q ', 1 still running' "$T/rec0" || fail "a live process was not left alone: $(cat "$T/rec0")"
kill -TERM "$vpid"
bg_wait "$vpid" 10
# Recovered later: the open fds' last_active is still before the death.
dead_at=$EPOCHREALTIME
sleep 1.5
"$launcher" recover "$T/state" 2>"$T/rec1" || fail "recover: $(cat "$T/rec1")"
grep -q ': 1 recovered' "$T/rec1" || fail "recover: $(cat "$T/rec1")"
log=$T/logs/term.$vpid.log
expect_eq "SIGTERM: end" "$(q "$log" "E['end']")" killed
expect_eq "SIGTERM: bytes_out" "$(q "$log" "tot('bytes_out')")" $((123456 + 7777))
expect_eq "SIGTERM: bytes_in" "$(q "$log" "tot('bytes_in')")" $((123456 + 7777))
expect_eq "SIGTERM: fds_closed" "$(q "$log" "tot('fds_closed')")" 2
expect_eq "SIGTERM: fds still open" "$(q "$log" "sorted(f['bytes_out'] + f['bytes_in'] for f in E['fds'])")" "[123456, 123456]"
expect_eq "SIGTERM: open fds last active before the death" \
	"$(q "$log" "max(f['last_active'] for f in E['fds']) < $dead_at")" true
expect_eq "SIGTERM: close records" "$(q "$log" "sorted(f['bytes_out'] + f['bytes_in'] for f in CL)")" "[7777, 7777]"
# When it was last seen alive (its ticker's last tick; the record's ts is
# the recovery's), and sockmeter-report's duration ends there, not at the
# recovery 1.5 s later.
expect_eq "SIGTERM: alive_until after the start, before the death" \
	"$(q "$log" "E['start'] < E['alive_until'] < $dead_at < E['ts']")" true
/usr/bin/python3 "$SM_TOP/scripts/sockmeter-report" -f json "$log" >"$T/report.json"
dur=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["duration"])' "$T/report.json")
expect_eq "SIGTERM: report's duration ends when it was last seen" \
	"$(q "$log" "abs($dur - (E['alive_until'] - E['start'])) < 1e-5")" true
# So does the life of each fd still open at the kill (it ran to the
# recovery, 1.5 s later, and its average rate was made over that).
alive=$(q "$log" "E['alive_until']")
ends=$("$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
ends = [c["opened"] + c["lifetime"] for c in j["by_bytes"]
        if c["state"] == "open at exit"]
print(len(ends), all(abs(e - float(sys.argv[2])) < 1e-3 for e in ends))' \
	"$T/report.json" "$alive")
expect_eq "SIGTERM: report's open fds' life ends when it was last seen" \
	"$ends" "2 True"
expect_eq "state files left" "$(ls "$T/state" | wc -l)" 0

# --- SIGKILL before the first drain ---------------------------------------
# Closes still queued at the kill (the ticker drains once a second) are
# recovered with it, and its alive_until is never before them: before,
# with no tick yet, it was the start, and a helper's nghttpd, killed
# 0.35 s in, said alive_until 0.26 s before its last close.
cat >"$T/early.py" <<'PYEOF'
import os, socket, time
for i in range(3):
    a, b = socket.socketpair()
    a.sendall(b"e" * 1000)
    b.recv(4096)
    a.close(); b.close()
    time.sleep(0.05)
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
victim_start early "$T/early.py"
epid=$VPID
kill -KILL "$epid"
bg_wait "$epid" 10
"$launcher" recover "$T/state" 2>"$T/rec-early" || fail "recover: $(cat "$T/rec-early")"
log=$T/logs/early.$epid.log
expect_eq "early kill: close records, exit record" \
	"$(q "$log" "[len(CL), E['end'], tot('bytes_out')]")" '[6, "killed", 3000]'
expect_eq "early kill: alive_until no earlier than its closes" \
	"$(q "$log" "all(f['closed'] <= E['alive_until'] for f in CL)")" true
echo "early kill: $(q "$log" "sum(1 for r in R if r['type'] == 'close' and r['ts'] > E['alive_until'])") close records recovered with it" >&2

# --- SIGKILL in the middle of 1 GB ---------------------------------------
cat >"$T/recv.py" <<'PYEOF'
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(1)
print("port", s.getsockname()[1], flush=True)
c, _ = s.accept()
n = 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    n += len(b)
    if n >= 64 << 20:
        print("progress", n, flush=True)
        time.sleep(0.001)   # keeps 1 GB well over a second long
print("total", n, flush=True)
PYEOF
bg_start "$PY" "$T/recv.py" >"$T/recv.out"
rpid=$BG_PID
wait_line "$T/recv.out" '^port'
port=$(awk '/^port/ { print $2 }' "$T/recv.out")
SOCKMETER_LOG=$T/logs/kill.%p.log bg_start env LD_PRELOAD="$LIB" \
	socat -b 65536 -u OPEN:/dev/zero,readbytes=1073741824 TCP:127.0.0.1:"$port"
wait_line "$T/recv.out" '^progress'
spid=$(ps -o pid= --ppid "$BG_PID" | tr -d ' ') # socat, under timeout
[ -n "$spid" ] || fail "socat is not running"
kill -KILL "$spid"
bg_wait "$rpid" 20 || fail "receiver failed"
total=$(awk '/^total/ { print $2 }' "$T/recv.out")
[ "$total" -lt 1073741824 ] || fail "the transfer ended before the kill"
recovered_killed SIGKILL "$T/logs/kill.*.log" "$total" 65536
expect_eq "state files left" "$(ls "$T/state" | wc -l)" 0

# --- SIGKILL of a process that never had a connection ---------------------
# Nothing to write, and recover says so (it said "final records appended"
# to a log it never made).
SOCKMETER_LOG=$T/logs/idle.%p.log bg_start env LD_PRELOAD="$LIB" sleep 30
wait_for 10 sh -c "ls '$T/state' | grep -q state" || fail "no state file for sleep"
ipid=$(ls "$T/state" | sed -n 's/^\([0-9]*\)-.*/\1/p')
kill -KILL "$ipid"
wait_for 10 sh -c "! kill -0 $ipid 2>/dev/null" || fail "sleep $ipid lives on"
"$launcher" recover "$T/state" 2>"$T/rec3" || fail "recover: $(cat "$T/rec3")"
grep -q "sleep\[$ipid\]: it had no connection: no record to write" "$T/rec3" ||
	fail "recover: $(cat "$T/rec3")"
[ ! -e "$T/logs/idle.$ipid.log" ] || fail "a log for sleep: $(cat "$T/logs/idle.$ipid.log")"
expect_eq "state files left" "$(ls "$T/state" | wc -l)" 0
# recover -q prints only problems, and nothing to write is none (it printed
# that line too).
SOCKMETER_LOG=$T/logs/idle.%p.log bg_start env LD_PRELOAD="$LIB" sleep 30
wait_for 10 sh -c "ls '$T/state' | grep -q state" || fail "no state file for the second sleep"
ipid=$(ls "$T/state" | sed -n 's/^\([0-9]*\)-.*/\1/p')
kill -KILL "$ipid"
wait_for 10 sh -c "! kill -0 $ipid 2>/dev/null" || fail "sleep $ipid lives on"
"$launcher" recover -q "$T/state" 2>"$T/rec4" || fail "recover -q: $(cat "$T/rec4")"
[ ! -s "$T/rec4" ] || fail "recover -q said: $(cat "$T/rec4")"
expect_eq "state files left after recover -q" "$(ls "$T/state" | wc -l)" 0
exit 0
