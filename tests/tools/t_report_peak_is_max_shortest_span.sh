# A connection's peak rate is the highest in+out rate over the shortest
# span ("1s") that the interval and exit records showed for it, computed
# here from the log; for the paced transfer it is the pace (200,000 B/s
# +-15%), and the two paced connections lead the "by peak" ranking.
# Connections that never lived a whole bucket have no peak.
. "$(dirname "$0")/lib.sh"
fixture_paced
pycheck "peak rate" <<'PY'
logs = files("paced/logs/*.log")
want = {}
for path, r in records(*logs):
    if r["type"] not in ("interval", "exit"):
        continue
    for f in r["fds"]:
        rates = f.get("rates")
        key = (path, r["pid"], f["fd"], f.get("opened"))
        if rates:
            k = min(rates, key=lambda s: float(s.rstrip("s")))
            v = rates[k]["in"] + rates[k]["out"]
            want[key] = max(want.get(key, 0), v)
rep = report(*logs)
for row in rep["by_bytes"]:
    key = conn_key(row)
    if key in want:
        assert abs(row["peak_rate"] - want[key]) < 0.11, (row, want[key])
        assert row["peak_span"] == "1s"
    else:
        assert row["peak_rate"] is None, row
first2 = rep["by_peak"][:2]
assert {r["prog"] for r in first2} == {"python3", "socat"}, first2
for r in first2:
    assert 170000 <= r["peak_rate"] <= 230000, r
    assert r["bytes"] == 600000, r
PY
exit 0
