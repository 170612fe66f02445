# Read together, the logs of a download, a paced transfer and a forking
# program (7 processes) give one "processes" row each, whose bytes, calls,
# errors and fd counts equal that process's exit record, with the duration
# from its start to its exit.
. "$(dirname "$0")/lib.sh"
fixture_download
fixture_paced
fixture_fork
pycheck "process totals" <<'PY'
logs = files("dl/logs/*.log") + files("paced/logs/*.log") + files("fork/logs/*.log")
assert len(logs) == 8, logs     # curl, server, pace.py, socat, forker x4
rows = report(*logs)["processes"]
assert len(rows) == len(logs), "%d rows for %d logs" % (len(rows), len(logs))
for log in logs:
    e = exit_record(log)
    r = [r for r in rows if r["log"] == log]
    assert len(r) == 1, log
    r = r[0]
    t = e["totals"]
    assert (r["pid"], r["prog"], r["state"]) == (e["pid"], e["prog"], "exited")
    for k in ("bytes_in", "bytes_out", "calls_in", "calls_out", "fds_open", "fds_closed"):
        assert r[k] == t[k], "%s %s: report %s, exit record %s" % (log, k, r[k], t[k])
    assert r["errors_in"] == sum(t["errors_in"].values())
    assert r["errors_out"] == sum(t["errors_out"].values())
    assert abs(r["duration"] - (e["ts"] - e["start"])) < 1e-5
PY
exit 0
