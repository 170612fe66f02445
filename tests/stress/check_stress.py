#!/usr/bin/env python3
"""check_stress.py OUT LOG [THREADS SOCKETS] - tests/progs/stress's own
counts (OUT, its stdout) against the exit record of its JSON log (LOG,
written with top = 0): for every one of the THREADS x SOCKETS connections
(default 8 x 64), the sending fd's bytes_out/calls_out and the receiving
fd's bytes_in/calls_in are exactly what the program counted, the other
direction is zero, the size histograms add up to the calls, the listener
moved nothing, and the totals are the sums.  Exit 0, or 1 with the reason.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import logq  # noqa: E402


def check(out, log, nthreads=8, nsock=64):
    ns = logq.namespace(logq.load(log))
    E, T, IV = ns["E"], ns["T"], ns["IV"]
    conns, tot = [], None
    for line in open(out):
        m = re.match(r"conn \d+ \d+ kind=(\w+) out_fd=(\d+) in_fd=(\d+) "
                     r"bytes=(\d+) out_calls=(\d+) in_calls=(\d+)$", line)
        if m:
            conns.append((m.group(1),) + tuple(int(x) for x in m.groups()[1:]))
        elif line.startswith("total_bytes="):
            tot = dict(kv.split("=") for kv in line.split())
    assert tot, "no totals line in %s" % out
    assert len(conns) == nthreads * nsock, "%d connections" % len(conns)
    assert T.get("close_records_dropped", 0) == 0
    fds = {f["fd"]: f for f in E["fds"]}
    assert E["fds_omitted"] == 0, "exit record omitted %d fds" % E["fds_omitted"]
    assert len(fds) == nthreads * nsock * 2 + 1, "exit record lists %d fds" % len(fds)
    assert T["fds_open"] == len(fds) and T["fds_closed"] == 0, T
    bad = []
    for kind, ofd, ifd, nbytes, ocalls, icalls in conns:
        o, i = fds.get(ofd), fds.get(ifd)
        if o is None or i is None:
            bad.append("fd %d or %d missing" % (ofd, ifd))
            continue
        got = (o["kind"], o["bytes_out"], o["calls_out"], o["bytes_in"],
               o["calls_in"], i["kind"], i["bytes_in"], i["calls_in"],
               i["bytes_out"], i["calls_out"])
        want = (kind, nbytes, ocalls, 0, 0, kind, nbytes, icalls, 0, 0)
        if got != want:
            bad.append("fds %d->%d: got %s, want %s" % (ofd, ifd, got, want))
        if sum(o["sizes_out"]) != ocalls or sum(i["sizes_in"]) != icalls:
            bad.append("fds %d->%d: sizes histogram does not add up" % (ofd, ifd))
    assert not bad, "%d fds wrong, e.g. %s" % (len(bad), bad[:3])
    lf = fds[int(tot["listen_fd"])]
    assert lf["bytes_in"] == lf["bytes_out"] == 0, "listener moved bytes"
    assert T["bytes_out"] == T["bytes_in"] == int(tot["total_bytes"]), \
        "totals %d/%d, program %s" % (T["bytes_out"], T["bytes_in"],
                                      tot["total_bytes"])
    assert T["calls_out"] == int(tot["total_out_calls"]), (T["calls_out"], tot)
    assert T["calls_in"] == int(tot["total_in_calls"]), (T["calls_in"], tot)
    zero = {"again": 0, "intr": 0, "other": 0}
    assert T["errors_in"] == T["errors_out"] == zero, "errors counted"
    for r in IV:
        assert r["totals"]["bytes_out"] <= T["bytes_out"], "interval ahead"
    return len(IV)


if __name__ == "__main__":
    try:
        a = sys.argv[1:]
        n = check(a[0], a[1], *(int(x) for x in a[2:4]))
        print("stress: exact over %d connections, %d interval records"
              % (8 * 64 if len(a) < 4 else int(a[2]) * int(a[3]), n))
    except (AssertionError, logq.LogError, KeyError) as e:
        print("check failed: %s" % e)
        sys.exit(1)
