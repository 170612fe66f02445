# curl closes fd 5 after its first transfer and gets fd 5 again for the
# second: the report keeps the two connections apart (by when they were
# opened), each with its own bytes, in both rankings.
. "$(dirname "$0")/lib.sh"
fixture_download
pycheck "fd reuse" <<'PY'
log, = files("dl/logs/curl.*.log")
tcp = [f for f in close_fds(log) if f["kind"] == "tcp"]
assert len(tcp) == 2 and tcp[0]["fd"] == tcp[1]["fd"], \
    "precondition: curl used fds %s" % [f["fd"] for f in tcp]
fd = tcp[0]["fd"]
rep = report(log)
for section in ("by_bytes", "by_peak"):
    rows = [r for r in rep[section] if r["fd"] == fd and r["kind"] == "tcp"]
    assert len(rows) == 2, "%s: %d rows for fd %d" % (section, len(rows), fd)
    assert {r["opened"] for r in rows} == {f["opened"] for f in tcp}
    assert sorted(r["bytes_in"] for r in rows) == sorted(f["bytes_in"] for f in tcp)
# the table shows both too
tab = run(REPORT, "--only", "by_bytes", log).stdout
lines = [l for l in tab.splitlines() if re.search(r"\s%d\s+tcp\s" % fd, l)]
assert len(lines) == 2, tab
PY
exit 0
