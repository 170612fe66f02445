# The "1s" rate follows a steady stream: slow_sender sends 1000 bytes every
# 50 ms (~20,000 B/s) for ~2.8 s with SOCKMETER_INTERVAL=0.25, so records
# are made between bucket boundaries (bucket 1 s), and so is the exit
# record.  By the README a span's rate is the bytes in its last N
# *completed* buckets / (N x width): in every record made after the first
# second, the sender's "1s" out rate must be the bytes sent in the last
# completed second (counted from the program's own send times, +-2 sends
# for jitter at the edges), and never more than 21 sends' worth.
#
# Regression: records and the exit record are made between bucket
# boundaries; their bytes must not go into the bucket that already ended
# (a steady 20,000 B/s once read 25,000..35,000 B/s).
. "$(dirname "$0")/lib.sh"

need_prog slow_sender
SOCKMETER_LOG=$T/r.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.25 \
	sm "$PROGS/slow_sender" 56 50 1000 "$T/times" >"$T/out" 2>"$T/err" ||
	fail "slow_sender failed: $(cat "$T/out" "$T/err")"
sfd=$(field send_fd "$T/out")
cat >"$T/check.py" <<PYEOF
import math
sends = [float(l.split()[0]) for l in open("$T/times")]
checked, bad = 0, []
for r in IV + [E]:
    age = r["ts"] - r["start"]
    f = [f for f in r["fds"] if f["fd"] == $sfd]
    if age < 1.05 or not f or "rates" not in f[0]:
        continue
    # Too close to a bucket boundary to know which bucket just completed.
    if abs(age - round(age)) < 0.03:
        continue
    k = math.floor(age) - 1                      # the last completed bucket
    lo, hi = r["start"] + k, r["start"] + k + 1
    want = 1000 * sum(1 for t in sends if lo <= t < hi)
    got = f[0]["rates"]["1s"]["out"]
    checked += 1
    if abs(got - want) > 2000 or got > 21000:
        bad.append("%s +%.2fs: 1s rate %.0f B/s, bucket [+%ds, +%ds) had %d B"
                   % (r["type"], age, got, k, k + 1, want))
assert checked >= 3, "only %d interval records to check" % checked
assert not bad, "; ".join(bad)
PYEOF
check_py "$T/r.log" "$T/check.py" "1s rate vs bytes sent in the last completed second"
exit 0
