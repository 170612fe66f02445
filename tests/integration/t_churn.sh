# fd numbers reused across threads at full speed (tests/progs/churn: each
# of 4 threads opens a socketpair, moves a known number of bytes, closes
# both ends, 400 times): every connection has exactly one close record
# and the bytes of each are exactly one round's, none mixed with another
# connection's.  With 16,000 closes in well under a second from 8 threads,
# records the close queue could not hold would be counted as dropped, and
# the totals stay exact either way (t_churn_rate: none are dropped at
# 25,000 closes/s).
. "$(dirname "$0")/lib.sh"

need_prog churn
SOCKMETER_LOG=$T/a.log SOCKMETER_FORMAT=json \
	sm "$PROGS/churn" 4 400 >"$T/a.out" 2>"$T/a.err" ||
	fail "churn failed: $(cat "$T/a.err")"
conns=$(field connections "$T/a.out")
total=$(field total "$T/a.out")
cat >"$T/a.py" <<PYEOF
want = sorted(1 + (t * 7919 + r * 104729) % 3000 for t in range(4) for r in range(400))
assert T.get("close_records_dropped", 0) == 0, "records dropped"
assert len(CL) == $conns == T["fds_closed"], \
    "%d close records, fds_closed %d, expected $conns" % (len(CL), T["fds_closed"])
mixed = [f for f in CL if f["bytes_in"] and f["bytes_out"]]
assert not mixed, "a connection with bytes both ways: %s" % mixed[:1]
outs = sorted(f["bytes_out"] for f in CL if f["bytes_out"])
ins = sorted(f["bytes_in"] for f in CL if f["bytes_in"])
assert outs == want, "bytes_out of the close records are not the rounds' sizes"
assert ins == want, "bytes_in of the close records are not the rounds' sizes"
assert all(f["calls_out"] == 1 for f in CL if f["bytes_out"]), "calls_out"
assert T["bytes_out"] == T["bytes_in"] == $total, "totals"
PYEOF
check_py "$T/a.log" "$T/a.py"

SOCKMETER_LOG=$T/b.log SOCKMETER_FORMAT=json \
	sm "$PROGS/churn" 8 1000 >"$T/b.out" 2>"$T/b.err" ||
	fail "churn failed: $(cat "$T/b.err")"
conns=$(field connections "$T/b.out")
total=$(field total "$T/b.out")
cat >"$T/b.py" <<PYEOF
dropped = T.get("close_records_dropped", 0)
assert len(CL) + dropped == T["fds_closed"] == $conns, \
    "%d records + %d dropped, fds_closed %d, expected $conns" % (
        len(CL), dropped, T["fds_closed"])
assert T["bytes_out"] == T["bytes_in"] == $total, \
    "totals %d/%d, expected $total" % (T["bytes_out"], T["bytes_in"])
assert csum("bytes_out") <= $total
PYEOF
check_py "$T/b.log" "$T/b.py"
exit 0
