# The three output formats carry the same numbers: the table has every
# section with right-aligned number columns, the CSV parses (one block per
# section, a header row starting "section", every row as wide as its
# header), the JSON has every section; --top and --only limit them.
. "$(dirname "$0")/lib.sh"
fixture_download
fixture_paced
pycheck "formats" <<'PY'
logs = files("dl/logs/*.log") + files("paced/logs/*.log")
js = report(*logs)
for k in ("processes", "by_bytes", "by_peak", "peers", "kinds", "timeline", "t0"):
    assert k in js, k

tab = run(REPORT, *logs).stdout
for title in ("== Processes (4)", "== Top 10 connections by bytes",
              "== Top 10 connections by peak rate", "== Peers by host",
              "== Kinds", "== Timeline of the total rate"):
    assert title in tab, title
# by_bytes: the header's bytes_in ends where every row's number ends
sec = tab.split("== Top 10 connections by bytes")[1].split("\n\n")[0].splitlines()[1:]
head, rows = sec[0], sec[1:]
end = head.index("bytes_in") + len("bytes_in")
assert rows, sec
want = [r["bytes_in"] for r in js["by_bytes"][:len(rows)]]
got = [int(r[:end].split()[-1]) for r in rows]
assert got == want, (got, want)
assert all(r[end] == " " for r in rows), rows

text = run(REPORT, "-f", "csv", *logs).stdout
blocks = text.strip("\n").split("\n\n")
names = []
for b in blocks:
    rows = list(csv.reader(io.StringIO(b)))
    assert rows[0][0] == "section", rows[0]
    assert all(len(r) == len(rows[0]) for r in rows), b[:200]
    assert len({r[0] for r in rows[1:]}) <= 1
    names.append(rows[1][0] if len(rows) > 1 else None)
    if names[-1] == "by_bytes":
        col = rows[0].index("bytes_in")
        assert [int(r[col]) for r in rows[1:]] == [r["bytes_in"] for r in js["by_bytes"][:10]]
# slowest lists only connections the kernel saw limited (tcp_info): none
# of these loopback transfers may have been, so it can be empty
assert names[3] in ("slowest", None), names
del names[3]
assert names == ["processes", "by_bytes", "by_peak", "peers", "kinds", "timeline"], names

one = json.loads(run(REPORT, "-f", "json", "--top", "1", *logs).stdout)
assert len(one["by_bytes"]) == 1 and one["by_bytes"][0]["bytes"] == js["by_bytes"][0]["bytes"]
assert "Top 1 connections by bytes" in run(REPORT, "-n", "1", *logs).stdout
only = run(REPORT, "-f", "csv", "--only", "peers", *logs).stdout
assert only.startswith("section,peer,") and "\n\n" not in only.strip("\n"), only
PY
exit 0
