# SOCKMETER_INTERVAL=0.2 while a program sends 1000 bytes every 50 ms for
# ~1.5 s (tests/progs/slow_sender): at least 3 interval records; a send
# made entirely between two records is listed (both fds of the pair) by
# the later one or, when the earlier one's sampling came after it, by the
# earlier one - no assumption on how soon the ticker samples after a
# record's timestamp; an fd's bytes and the totals never decrease from one
# record to the next, and never exceed what was sent; the exit record's
# are exact; record k is written no earlier than k intervals after start,
# and no more records than intervals.
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
# and this record's ts was accounted before this record sampled, so this
# record lists the pair - unless the previous record's own sampling (which
# follows its ts by an unknown delay) already saw it, and listed it.
prev, prev_fds = IV[0]["start"], set()
for r in IV:
    fds = {f["fd"] for f in r["fds"]}
    sent = [a for a, b in times if prev < a and b < r["ts"]]
    assert not sent or {sfd, rfd} <= fds | prev_fds, \
        "interval record at %.3f lists fds %s (the one before: %s) after " \
        "sends at %s" % (r["ts"], sorted(fds), sorted(prev_fds),
                         ["%.3f" % a for a in sent])
    prev, prev_fds = r["ts"], fds

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
        bound = 30 if key == "calls_out" else total
        assert v <= bound, "fd %d %s is %d > %d at %.3f" % (
            fd, key, v, bound, r["ts"])
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
# Interval record k (from 1) is due k * 0.2 s after start and never
# written before (10 ms for the two clocks' drift); no more of them than
# whole intervals before the exit record.
for k, r in enumerate(IV, 1):
    assert r["ts"] >= r["start"] + 0.2 * k - 0.01, \
        "interval record %d at %.3f s, due at %.3f s" % (
            k, r["ts"] - r["start"], 0.2 * k)
assert len(IV) <= int((E["ts"] - E["start"]) / 0.2) + 1, \
    "%d interval records in %.3f s" % (len(IV), E["ts"] - E["start"])
PYEOF
check_py "$log" "$T/check.py"
exit 0
