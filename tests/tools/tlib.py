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
