#!/usr/bin/env python3
"""tools_gen.py - logs of any length made from the records of a real run.

    tools_gen.py TEMPLATE_LOG N [--procs P] [--rate R] [--hosts H]
                 [--interval S] [--seed S] [--out FILE]  (default: stdout)
    tools_gen.py TEMPLATE_LOG N --split DIR [--procs P] ...

TEMPLATE_LOG is a JSON log of a real metered run (tests/bench/
tools_workload.py under the preload).  Writes N records as P processes of
a busy server would: R close records per second in all (default 1000),
each a real close record of the template with its time, pid, fd and
addresses changed (the peer from H hosts, a random port; the counters and
histograms as recorded), and per process one interval record every
--interval seconds (default 1) (a real interval record of the template, its totals the running sums of
the process's closes, its fds the template's with their times moved) and
an exit record at the end.  --split writes one log per process into DIR
(PROG.PID.log) instead: the shape of a directory of many short-lived
processes' logs.  Deterministic for a given seed.
"""
import argparse
import json
import os
import random
import sys


def load(path):
    closes, intervals, exits = [], [], []
    with open(path) as fh:
        for line in fh:
            r = json.loads(line)
            {"close": closes, "interval": intervals,
             "exit": exits}[r["type"]].append(r)
    if not closes or not intervals:
        sys.exit("tools_gen.py: %s needs close and interval records" % path)
    return closes, intervals, exits


def close_templates(closes):
    """Each close record as a format string: the parts that change are
    fields, the counters and histograms stay as recorded."""
    out = []
    for r in closes:
        f = r["fds"][0]
        fixed = {k: v for k, v in f.items()
                 if k not in ("fd", "kind", "local", "peer", "opened",
                              "last_active", "closed", "duration",
                              "avg_rate")}
        body = json.dumps(fixed, separators=(",", ":"))[1:-1]
        tail = ""
        if "avg_rate" in f:
            tail = ',"avg_rate":' + json.dumps(f["avg_rate"],
                                               separators=(",", ":"))
        dur = f.get("duration") or 0.001
        out.append((
            '{"type":"close","ts":%.6f,"pid":%d,"prog":"%s","start":%.6f,'
            '"fds":[{"fd":%d,"kind":"' + f["kind"] + '","local":"%s",'
            '"peer":"%s",' + body.replace("%", "%%") +
            ',"opened":%.6f,"last_active":%.6f,"closed":%.6f,'
            '"duration":%.6f' + tail.replace("%", "%%") + '}]}\n', dur,
            f.get("bytes_in", 0) + f.get("bytes_out", 0)))
    return out


class Proc:
    def __init__(self, pid, start):
        self.pid = pid
        self.start = start
        self.bytes = 0
        self.closed = 0
        self.next_interval = start


def interval_record(t, p, ts, typ):
    r = json.loads(json.dumps(t))
    shift = p.start - t["start"]
    r["type"], r["ts"], r["pid"], r["start"] = typ, ts, p.pid, p.start
    tot = r["totals"]
    base_in = tot.get("bytes_in", 0)
    tot["bytes_in"] = base_in + p.bytes // 2
    tot["bytes_out"] = tot.get("bytes_out", 0) + p.bytes // 2
    tot["fds_closed"] = p.closed
    for f in r["fds"]:
        for k in ("opened", "last_active"):
            if isinstance(f.get(k), (int, float)):
                f[k] = min(ts, f[k] + shift)
    if typ == "exit":
        r["fds"] = []
        r["fds_omitted"] = 0
    return json.dumps(r, separators=(",", ":")) + "\n"


def generate(args, write_for):
    closes, intervals, exits = load(args.template)
    tpl = close_templates(closes)
    prog = closes[0]["prog"]
    rnd = random.Random(args.seed)
    t0 = 1796000000.0
    procs = [Proc(200000 + i, t0 + 0.013 * i) for i in range(args.procs)]
    for p in procs:
        p.next_interval = p.start + args.interval
    dt = 1.0 / args.rate
    ts = t0 + 0.5
    hosts = ["10.%d.%d.%d" % (1 + h // 65536 % 250, h // 256 % 256, h % 256)
             for h in range(args.hosts)]
    n = 0
    ntpl, nint = len(tpl), len(intervals)
    while n < args.n - len(procs):
        p = procs[rnd.randrange(len(procs))]
        w = write_for(p)
        if ts >= p.next_interval:
            w(interval_record(intervals[n % nint], p, ts, "interval"))
            p.next_interval += args.interval
            n += 1
            continue
        fmt, dur, nbytes = tpl[n % ntpl]
        port = 1024 + rnd.randrange(60000)
        w(fmt % (ts, p.pid, prog, p.start, 5 + n % 1000,
                 "10.0.0.1:8080", "%s:%d" % (hosts[rnd.randrange(len(hosts))],
                                             port),
                 ts - dur, ts, ts, dur))
        p.bytes += nbytes
        p.closed += 1
        ts += dt
        n += 1
    for p in procs:
        write_for(p)(interval_record(exits[0] if exits else intervals[0],
                                     p, ts, "exit"))
        ts += dt
    return prog, procs


def main():
    ap = argparse.ArgumentParser(prog="tools_gen.py")
    ap.add_argument("template")
    ap.add_argument("n", type=int)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out")
    ap.add_argument("--split", metavar="DIR")
    args = ap.parse_args()
    if args.split:
        files = {}

        def write_for(p):
            fh = files.get(p.pid)
            if fh is None:
                fh = files[p.pid] = open(os.path.join(
                    args.split, "gen.%d.log" % p.pid), "w")
            return fh.write
        generate(args, write_for)
        for fh in files.values():
            fh.close()
        return 0
    out = open(args.out, "w", buffering=1 << 20) if args.out else sys.stdout
    try:
        w = out.write
        generate(args, lambda p: w)
        out.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
