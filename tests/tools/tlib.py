"""tlib.py - helpers for the Python checks of the tools tests (pycheck).

The truth a test compares with comes straight from the log lines, read
here without the report's code: records(), close_fds(), exit_record().
"""
import csv
import glob
import io
import json
import os
import re
import struct
import subprocess
import sys

TOP = os.environ["SM_TOP"]
FIX = os.environ["SM_FIX"]
REPORT = os.path.join(TOP, "scripts", "sockmeter-report")


def files(pattern):
    out = sorted(glob.glob(os.path.join(FIX, pattern)))
    assert out, "no file matches %s" % pattern
    return out


def records(*paths):
    """(path, record) for every line of the logs, in order."""
    out = []
    for p in paths:
        with open(p) as fh:
            for line in fh:
                out.append((p, json.loads(line)))
    return out


def exit_record(path):
    ex = [r for _, r in records(path) if r["type"] == "exit"]
    assert len(ex) == 1, "%s: %d exit records" % (path, len(ex))
    return ex[0]


def close_fds(path):
    return [r["fds"][0] for _, r in records(path) if r["type"] == "close"]


def run(*argv, check=True):
    res = subprocess.run(list(argv), capture_output=True, text=True,
                         timeout=60)
    if check:
        assert res.returncode == 0, "%s exited %d: %s" % (
            " ".join(argv), res.returncode, res.stderr.strip()[-300:])
    return res


def report(*args):
    """The report in JSON (all connections listed)."""
    res = run(REPORT, "-f", "json", "--top", "0", *args)
    return json.loads(res.stdout)


def conn_key(row):
    return (row["log"], row["pid"], row["fd"], row["opened"])


# ---- the steady fixture (tests/tools/steady.py) -------------------------

STEADY_SHORT = 10000   # bytes one end of a short connection moves


def steady_steps(recs, rounds, start=None):
    """The timeline the steady fixture's rounds make under the report's
    model (its --help: each step between two records of a process spread
    evenly over it), from the truth the program printed, not the log's
    numbers: [(t_a, t_b, bytes per second)] between the record times of
    recs.  start: the process's start, where its counters were 0 (the
    whole log); None for a set whose first records are lost, which
    begins at its first record.  A short connection's bytes are in the
    close records of the step its round ended in; the long pair's only
    in the records with totals (interval, exit) and its own close
    record, so they belong to the step that ends at the first such
    record after their round; in a cut set, those of its earlier life
    are left out (the report takes them pro rata to their time, and the
    long pair's pace is steady)."""
    times = sorted({r["ts"] for r in recs})
    pts, seen_long = ([] if start is None else [(start, 0.0)]), 0.0
    for tb in times:
        at = [r for r in recs if r["ts"] == tb]
        if (tb == times[0] and start is None) or any(
                r["type"] != "close" or any(f["bytes_in"] + f["bytes_out"] != STEADY_SHORT
                                            for f in r["fds"]) for r in at):
            seen_long = sum(x - 2 * STEADY_SHORT for t, x in rounds if t <= tb)
        pts.append((tb, sum(2 * STEADY_SHORT for t, _ in rounds if t <= tb) + seen_long))
    return [(a, b, (vb - va) / (b - a)) for (a, va), (b, vb) in zip(pts, pts[1:]) if b > a]


def steady_rate(steps, lo, hi):
    """The rate steps give the bin [lo, hi), or None when it is not
    inside them."""
    if not steps or lo < steps[0][0] or hi > steps[-1][1]:
        return None
    return sum(r * (min(hi, b) - max(lo, a)) for a, b, r in steps
               if a < hi and b > lo) / (hi - lo)
