# A day of history at 1 s (issue 15): spans 1, 60, 3600, 86400 are served
# by tiers of 1 s, 60 s and 1440 s, and every record says so ("res").  A
# real program (slow_sender: 1000 bytes every 50 ms, ~20,000 B/s, ~2.8 s)
# is younger than every long span, so the 60 s, 3600 s and 86400 s rates
# sum the very same whole seconds and must be equal to the last digit,
# whatever tier serves them; after two whole seconds they are near
# 20,000 B/s.  The text log's header names the coarse resolutions.
. "$(dirname "$0")/lib.sh"

need_prog slow_sender
cat >"$T/w.ini" <<INI
[window]
bucket = 1
buckets = 86400
spans = 1, 60, 3600, 86400
INI
SOCKMETER_CONFIG=$T/w.ini SOCKMETER_LOG=$T/r.log SOCKMETER_FORMAT=json \
	SOCKMETER_INTERVAL=0.25 \
	sm "$PROGS/slow_sender" 56 50 1000 "$T/times" >"$T/out" 2>"$T/err" ||
	fail "slow_sender failed: $(cat "$T/out" "$T/err")"
[ -s "$T/err" ] && fail "messages on stderr: $(cat "$T/err")"
sfd=$(field send_fd "$T/out")
cat >"$T/check.py" <<PYEOF
checked, bad = 0, []
for r in IV + [E]:
    age = r["ts"] - r["start"]
    f = [f for f in r["fds"] if f["fd"] == $sfd]
    if not f or "rates" not in f[0]:
        continue
    rt = f[0]["rates"]
    res = [rt[k]["res"] for k in ("1s", "60s", "3600s", "86400s")]
    if res != [1, 1, 60, 1440]:
        bad.append("res %s" % res)
    for d in ("in", "out"):
        v = [rt[k][d] for k in ("60s", "3600s", "86400s")]
        if len(set(v)) != 1:
            bad.append("%s +%.2fs %s: %s" % (r["type"], age, d, v))
    if age >= 2.1 and not 15000 <= rt["86400s"]["out"] <= 21000:
        bad.append("+%.2fs: 86400s out %.1f B/s" % (age, rt["86400s"]["out"]))
    checked += 1
assert checked >= 3, "only %d records with rates" % checked
assert not bad, "; ".join(bad[:5])
PYEOF
check_py "$T/r.log" "$T/check.py" "tiered spans"

SOCKMETER_CONFIG=$T/w.ini SOCKMETER_LOG=$T/t.log SOCKMETER_INTERVAL=0.5 \
	sm "$PROGS/slow_sender" 30 50 1000 "$T/times2" >"$T/out2" 2>"$T/err2" ||
	fail "slow_sender (text) failed: $(cat "$T/out2" "$T/err2")"
grep -q ' out/60s  *in/3600s@60s ' "$T/t.log" ||
	fail "no in/3600s@60s column in the text log: $(head -5 "$T/t.log")"
grep -q ' out/86400s@1440s$' "$T/t.log" ||
	fail "no out/86400s@1440s column in the text log"
exit 0
