# For every TCP connection of a real download (curl fetching 1,000,000
# bytes twice from python3's http.server, both metered), the bytes and
# calls that sockmeter-report gives equal the log's close record, and those
# equal what moved: curl's body + headers in and request out, the server's
# the other way round.
. "$(dirname "$0")/lib.sh"
fixture_download
pycheck "report vs close records vs bytes moved" <<'PY'
curl_log, = files("dl/logs/curl.*.log")
srv_log, = files("dl/logs/python3.*.log")
moved = [tuple(map(int, l.split())) for l in open(FIX + "/dl/curl.out")]
assert len(moved) == 2 and all(m[0] == 1000000 for m in moved), moved
rows = {conn_key(r): r for r in report(curl_log, srv_log)["by_bytes"]}
for log, inside, outside in ((curl_log, 0, 2), (srv_log, 2, 0)):
    pid = exit_record(log)["pid"]
    tcp = sorted((f for f in close_fds(log) if f["kind"] == "tcp" and f["peer"]),
                 key=lambda f: f["opened"])
    assert len(tcp) == 2, "%s: %d TCP close records" % (log, len(tcp))
    for f, m in zip(tcp, moved):
        want_in = m[0] + m[1] if inside == 0 else m[2]
        want_out = m[2] if inside == 0 else m[0] + m[1]
        assert (f["bytes_in"], f["bytes_out"]) == (want_in, want_out), \
            "%s fd %d: close record %d/%d, moved %d/%d" % (
                log, f["fd"], f["bytes_in"], f["bytes_out"], want_in, want_out)
        r = rows.get((log, pid, f["fd"], f["opened"]))
        assert r, "no report row for %s fd %d opened %s" % (log, f["fd"], f["opened"])
        for k in ("bytes_in", "bytes_out", "calls_in", "calls_out"):
            assert r[k] == f[k], "%s fd %d %s: report %s, close record %s" % (
                log, f["fd"], k, r[k], f[k])
        assert r["errors_in"] == sum(f.get("errors_in", {}).values())  # omitted when 0
        assert r["bytes"] == want_in + want_out
        assert r["state"] == "closed" and r["peer"] == f["peer"]
        assert abs(r["lifetime"] - f["duration"]) < 1e-6
PY
exit 0
