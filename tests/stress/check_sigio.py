#!/usr/bin/env python3
"""check_sigio.py OUT LOG - tests/progs/sigio's own counts (OUT) against the
exit record of its JSON log: for each of its six fds, bytes, calls, EINTR,
EAGAIN (and no other error) per direction exactly as the program's calls,
in the main thread and in its signal handler, made them.  Exit 0, or 1.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import logq  # noqa: E402


def check(out, log):
    fds = {f["fd"]: f for f in logq.namespace(logq.load(log))["E"]["fds"]}
    n = 0
    for line in open(out):
        if not line.startswith("fd="):
            continue
        c = dict((k, int(v)) for k, v in (kv.split("=") for kv in line.split()))
        f = fds[c["fd"]]
        n += 1
        for d in ("in", "out"):
            e = f["errors_" + d]
            got = (f["bytes_" + d], f["calls_" + d], e["intr"], e["again"],
                   e["other"])
            want = (c[d + "_bytes"], c[d + "_calls"], c[d + "_intr"],
                    c[d + "_again"], 0)
            assert got == want, ("fd %d %s: log (bytes, calls, intr, again, "
                                 "other) %s, program %s" % (c["fd"], d, got, want))
    assert n == 6, "%d fds in %s" % (n, out)


if __name__ == "__main__":
    try:
        check(sys.argv[1], sys.argv[2])
    except (AssertionError, logq.LogError, KeyError) as e:
        print("check failed: %s" % e)
        sys.exit(1)
