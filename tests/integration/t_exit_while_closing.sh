# An exit record made while other threads keep closing connections
# (tests/progs/exitclosing: three threads churn socketpairs, main calls
# exit).  Its fds_closed counts exactly the closes whose numbers are in
# its totals: every one has its close record, or is counted in
# close_records_dropped.  Before, fds_closed also counted closes made
# after the last drain, whose records were never written and whose
# numbers were not in the totals: a few records missing without a word,
# one run in 4 to 20 here, depending on the load (check_meter's
# test_meter_fds_closed_counts_only_closes_in_the_totals is the
# deterministic test of it).
. "$(dirname "$0")/lib.sh"

need_prog exitclosing
for i in 1 2 3 4 5 6; do
	log=$T/x$i.log
	SOCKMETER_LOG=$log SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/state \
		sm "$PROGS/exitclosing" 300 || fail "exitclosing failed (run $i)"
	"$PY" - "$log" <<'PYEOF' >"$T/check" 2>&1 || fail "run $i: $(cat "$T/check")"
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
ex = [r for r in R if r["type"] == "exit"]
assert len(ex) == 1, "%d exit records" % len(ex)
t = ex[0]["totals"]
closes = [f for r in R if r["type"] == "close" for f in r["fds"]]
dropped = t.get("close_records_dropped", 0)
assert len(closes) > 1000, "only %d close records: no churn" % len(closes)
assert len(closes) + dropped == t["fds_closed"], \
    "%d close records + %d dropped, fds_closed %d" % (
        len(closes), dropped, t["fds_closed"])
# The totals are the closed connections' and the open ones' (listed).
assert len(ex[0]["fds"]) == t["fds_open"], "open fds not all listed"
if not dropped:
    for d in ("bytes_in", "bytes_out"):
        got = sum(f[d] for f in closes) + sum(f[d] for f in ex[0]["fds"])
        assert got == t[d], "%s: records %d, totals %d" % (d, got, t[d])
PYEOF
done
exit 0
