# SOCKMETER_INTERVAL=0.2 while a program sends 1000 bytes every 50 ms for
# ~1.5 s (tests/progs/slow_sender): at least 3 interval records; each one
# that follows a send certainly made inside its interval lists both fds of
# the pair; an fd's bytes and the totals never decrease from one record to
# the next; the last interval record's numbers are <= the exit record's,
# and the exit record's are exact.
. "$(dirname "$0")/lib.sh"

need_prog slow_sender
SOCKMETER_LOG=$T/iv.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/slow_sender" 30 50 1000 "$T/times" >"$T/out" 2>"$T/err" ||
	fail "slow_sender failed: $(cat "$T/out" "$T/err")"
log=$T/iv.log
sfd=$(field send_fd "$T/out")
rfd=$(field recv_fd "$T/out")
total=$(field total "$T/out")
expect_eq "program total" "$total" 30000

cat >"$T/check.py" <<PYEOF
sfd, rfd, total = $sfd, $rfd, $total
times = [tuple(map(float, l.split())) for l in open("$T/times")]
assert len(times) == 30, "times file has %d lines" % len(times)
assert len(IV) >= 3, "%d interval records" % len(IV)

# A send whose whole [before, after] lies between the previous record's ts
# (plus 50 ms for the sampling after it) and this record's ts was counted
# in this interval, so the record must list the pair.
prev = IV[0]["start"]
for r in IV:
    fds = {f["fd"] for f in r["fds"]}
    sent = [a for a, b in times if prev + 0.05 < a and b < r["ts"]]
    assert not sent or {sfd, rfd} <= fds, \
        "interval record at %.3f lists fds %s after sends at %s" % (
            r["ts"], sorted(fds), ["%.3f" % a for a in sent])
    prev = r["ts"]

def fdval(r, fd, key):
    got = [f[key] for f in r["fds"] if f["fd"] == fd]
    return got[0] if got else None

records = IV + [E]
last = {}
for r in records:
    for fd, key in ((sfd, "bytes_out"), (rfd, "bytes_in"), (sfd, "calls_out")):
        v = fdval(r, fd, key)
        if v is None:
            continue
        assert v >= last.get((fd, key), 0), \
            "fd %d %s went down to %d at %.3f" % (fd, key, v, r["ts"])
        assert v <= total if key != "calls_out" else True
        last[(fd, key)] = v
    for key in ("bytes_in", "bytes_out", "calls_in", "calls_out"):
        v = r["totals"][key]
        assert v >= last.get(key, 0), \
            "totals %s went down to %d at %.3f" % (key, v, r["ts"])
        last[key] = v

assert fdval(E, sfd, "bytes_out") == total, \
    "exit record: fd %d bytes_out %s" % (sfd, fdval(E, sfd, "bytes_out"))
assert fdval(E, rfd, "bytes_in") == total, \
    "exit record: fd %d bytes_in %s" % (rfd, fdval(E, rfd, "bytes_in"))
assert fdval(E, sfd, "calls_out") == 30, "exit record: calls_out"
assert T["bytes_out"] == total and T["bytes_in"] == total, "exit totals"
# Records come in time order, intervals about 0.2 s apart.
ts = [r["ts"] for r in records]
assert ts == sorted(ts), "records out of order"
PYEOF
check_py "$log" "$T/check.py"
exit 0
