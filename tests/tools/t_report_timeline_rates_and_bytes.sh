# The timeline keeps every byte: its bins add up to the processes' totals
# (all fixtures together).  And it shows the rate: pace.py sends at
# 200,000 B/s to socat, both metered, so the 0.2 s bins inside the transfer
# read 200,000 B/s out and 200,000 B/s in: on average within 10%, each
# within 30% (a write landing on either side of a record moves 4000 bytes).
# The table shows the JSON's rates, human-readable.
. "$(dirname "$0")/lib.sh"
fixture_download
fixture_paced
fixture_fork
pycheck "timeline" <<'PY'
logs = files("dl/logs/*.log") + files("paced/logs/*.log") + files("fork/logs/*.log")
rep = report(*logs)
bins = rep["timeline"]["bins"]
for d in ("in", "out"):
    got = sum(b["bytes_" + d] for b in bins)
    want = sum(exit_record(l)["totals"]["bytes_" + d] for l in logs)
    assert abs(got - want) <= 0.1 * len(bins) + 1, "bytes_%s: bins %.1f, totals %d" % (d, got, want)
assert rep["timeline"]["t0"] == min(exit_record(l)["start"] for l in logs)

paced = files("paced/logs/*.log")
rep = report("--bin", "0.2", *paced)
tl = rep["timeline"]
assert tl["bin"] == 0.2
opened = min(r["opened"] for r in rep["by_bytes"] if r["bytes"] > 0)
start = opened - tl["t0"]
inner = [b for b in tl["bins"] if start + 0.2 <= b["t"] and b["t"] + 0.2 <= start + 2.8]
assert len(inner) >= 10, "only %d bins inside the transfer" % len(inner)
for d in ("rate_in", "rate_out"):
    mean = sum(b[d] for b in inner) / len(inner)
    assert 180000 <= mean <= 220000, "%s: %.0f B/s on average, sent at 200000" % (d, mean)
    for b in inner:
        assert 140000 <= b[d] <= 260000, "bin at %.1f s: %s %.0f B/s, sent at 200000" % (b["t"], d, b[d])

def human(v):
    for unit in ("B", "K", "M", "G"):
        if v < 1024:
            return "%dB/s" % round(v) if unit == "B" else "%.1f%s/s" % (v, unit)
        v /= 1024.0
tab = run(REPORT, "--only", "timeline", "--bin", "0.2", *paced).stdout
assert "bins of 0.2 s" in tab, tab
for b in inner:
    want = "%.3f  %s  %s  %s" % (b["t"], human(b["rate_in"]), human(b["rate_out"]), human(b["rate"]))
    assert re.search(r"(?m)^ +" + r" +".join(map(re.escape, want.split())) + "$", tab), (want, tab)
PY
exit 0
