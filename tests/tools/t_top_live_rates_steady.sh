# sockmeter top's rates between a live process's records: it reads the
# process's state file (its counters now) between the log's interval
# records, and the two interleave, sometimes a few hundredths of a second
# apart.  A rate made over such a gap is noise: a helper's wget, limited
# to a steady 2.0M/s, read 65.1M/s and 0B/s in turn; and one made over
# half a second swung between 1.6M/s and 2.6M/s where the records said
# 2.0M/s.  Here pace.py sends 3,000,000 bytes at 1,000,000 B/s in
# 300,000-byte writes (one every 0.3 s: half a second holds one or two,
# a second three or four) with interval records every second, and top -b
# refreshes every 0.2 s: every rate it shows for the connection until the
# exit is within 0.7 to 1.4 times the pace, and the process's under twice
# the pace (0B/s and 2.2M/s with b8dae82's top, 0.6M/s in 2 runs of 4
# with one that made rates over 0.4 s but let them replace a record's).
. "$(dirname "$0")/lib.sh"
need socat
mkdir -p "$T/logs" "$T/state"
export SOCKMETER_STATE=$T/state
port=$(free_port)
log=$T/logs/python3.log
bg_start timeout 30 "$TOPCMD" -b -d 0.2 "$log" >"$T/top.out" 2>&1
top_pid=$BG_PID
bg_start socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" OPEN:/dev/null
wait_listen "$port" "$BG_PID" || fail "socat did not listen on $port"
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=1 SOCKMETER_LOG=$log \
	sm "$PY" "$HERE/pace.py" 127.0.0.1 "$port" 3000000 1000000 300000 >/dev/null ||
	fail "pace.py failed"
wait_for 10 eval '! kill -0 $top_pid 2>/dev/null' || fail "top did not stop after the exit record"
wait "$top_pid" || fail "top: exit status $?"
"$PY" - "$T/top.out" "$port" <<'EOF' || fail "rates: $(grep -E '^python3' "$T/top.out" | head -n 60)"
import re, sys
UNIT = {"B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
def rate(s):
    m = re.fullmatch(r"([0-9.]+)([BKMG])/s", s)
    return float(m.group(1)) * UNIT[m.group(2)] if m else None
port = sys.argv[2]
conn, proc = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 8 or f[0] != "python3":
        continue
    if f[3] == "tcp" and f[4] == "127.0.0.1:" + port:
        if "exited" in f or "closed" in f:
            continue
        r = rate(f[6])          # OUT/s of the connection row
        if r is not None:
            conn.append(r)
    elif f[-1] != "exited" and rate(f[3]) is not None:
        proc.append(rate(f[3])) # OUT/s of the process row
assert len(conn) >= 5 and len(proc) >= 5, (conn, proc)
# From the connection's first rate to the exit: near the pace, every one.
bad = [r for r in conn if not 0.7e6 <= r <= 1.4e6]
assert not bad, "connection rates far from the pace: %s" % conn
bad = [r for r in proc if r > 2e6]
assert not bad, "process rates over twice the pace: %s" % proc
EOF
exit 0
