# The per-peer and per-kind aggregates equal the sums of the connections
# read straight from the logs (close record, else the latest record
# listing the fd); peers are hosts without the port, so the client and the
# server sides of the loopback transfers fall into one 127.0.0.1 row; and
# each process's connections add up to its exit-record totals.
. "$(dirname "$0")/lib.sh"
fixture_download
fixture_paced
fixture_fork
pycheck "peer and kind sums" <<'PY'
logs = files("dl/logs/*.log") + files("paced/logs/*.log") + files("fork/logs/*.log")
conns = {}
for path, r in records(*logs):
    for f in r["fds"]:
        key = (path, r["pid"], r["start"], f["fd"], f.get("opened"))
        old = conns.get(key)
        if old is None or old[0] != "close":
            conns[key] = (r["type"], f)

def host(peer):
    m = re.match(r"^\[(.*)\]:\d+$", peer) or re.match(r"^([^:\[\]]+):\d+$", peer)
    return m.group(1) if m else peer

want_peer, want_kind, per_proc = {}, {}, {}
for (path, pid, start, fd, opened), (_, f) in conns.items():
    for agg, k in ((want_peer, host(f["peer"])), (want_kind, f["kind"])):
        a = agg.setdefault(k, [0, 0, 0])
        a[0] += 1; a[1] += f["bytes_in"]; a[2] += f["bytes_out"]
    p = per_proc.setdefault(path, [0, 0])
    p[0] += f["bytes_in"]; p[1] += f["bytes_out"]
rep = report(*logs)
got_peer = {r["peer"]: [r["connections"], r["bytes_in"], r["bytes_out"]] for r in rep["peers"]}
got_kind = {r["kind"]: [r["connections"], r["bytes_in"], r["bytes_out"]] for r in rep["kinds"]}
assert got_peer == want_peer, "peers: report %s, logs %s" % (got_peer, want_peer)
assert got_kind == want_kind, "kinds: report %s, logs %s" % (got_kind, want_kind)
assert not any(re.search(r":\d+$", p) for p in got_peer), got_peer
lo = [r for r in rep["peers"] if r["peer"] == "127.0.0.1"][0]
assert lo["processes"] == 4 and lo["kinds"] == "tcp", lo   # curl, server, pace.py, socat
# both sides of both transfers: 2 x 2 HTTP connections + 2 paced ones
assert lo["connections"] == 6, lo
for path, (bi, bo) in per_proc.items():
    t = exit_record(path)["totals"]
    assert (bi, bo) == (t["bytes_in"], t["bytes_out"]), \
        "%s: connections %d/%d, totals %d/%d" % (path, bi, bo, t["bytes_in"], t["bytes_out"])
PY
exit 0
