#!/usr/bin/env python3
"""report.py - turn the raw runs of tests/bench/run.sh into the results
table: medians, ratios against "no preload", the targets of issue 3 with
met/missed, and the machine.  Prints the table and writes BENCHMARKS.md.

Ratios are paired: each round ran every configuration back to back, so a
configuration's ratio is the median over rounds of (its figure / the figure
of "no preload" in the same round); the range shows the lowest and highest
of those per-round ratios, i.e. how far one round can be trusted.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

LABELS = {
    "none": "no preload",
    "off": "sockmeter, enabled = false",
    "defaults": "sockmeter, defaults",
    "all": "sockmeter, every category (latency too)",
    "idle": "no preload, plus one idle thread (reference)",
    "strace": "strace -c -f",
    "trickle": "trickle -s, limits far above the traffic",
    "history-60": "spans 1, 10, 60 (60 s of history)",
    "history-3600": "spans 1, 60, 3600 (an hour)",
    "history-86400": "spans 1, 60, 3600, 86400 (a day)",
    "day": "a day at 1 s: spans 1, 60, 3600, 86400",
    "largest": "the largest window accepted (3072 B)",
}
for _c in ("bytes", "calls", "errors", "sizes", "windows", "peers", "latency"):
    LABELS["only-" + _c] = "sockmeter, only " + _c

WORKLOAD_TITLES = {
    "throughput": "1. throughput: {bytes} bytes over TCP loopback, 64 KiB write()s (the reader reads 64 KiB at a time)",
    "percall-unix": "2a. cost per call: 1-byte send + recv, unix socketpair, {percall} iterations",
    "percall-tcp": "2b. cost per call: 1-byte send + recv, TCP loopback, {percall_tcp} iterations",
    "manyfds-10": "3a. many fds: 10 sockets (5 socketpairs), 1-byte send + recv round-robin, {manyfds_n} iterations",
    "manyfds-N": "3b. many fds: {nfds} sockets ({npairs} socketpairs), 1-byte send + recv round-robin, {manyfds_n} iterations",
    "window": "4. window length sweep: workload 2a with bucket = 1 and 60 s, an hour or a day of history (multi-resolution tiers)",
    "threads-separate": "5a. two threads, one socketpair each, {threads} send + recv per thread",
    "threads-shared": "5b. two threads on one shared socketpair, {threads} send + recv per thread",
}


def parse_raw(path):
    runs = []
    with open(path) as f:
        for line in f:
            rnd, wl, cfg, div, wall, kv = line.rstrip("\n").split("\t")
            d = dict(x.split("=", 1) for x in kv.split())
            for k in list(d):
                try:
                    d[k] = float(d[k])
                except ValueError:
                    pass
            d.update(round=int(rnd), wl=wl, cfg=cfg, div=int(div),
                     wall=float(wall))
            runs.append(d)
    return runs


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return "?"


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.1f GiB" % (kb / 1048576)
    except (OSError, ValueError, IndexError):
        pass
    return [
        ("cores (nproc)", sh("nproc")),
        ("CPU", cpu),
        ("memory", mem),
        ("kernel", " ".join(platform.uname()[i] for i in (0, 2, 4))),
        ("C compiler", sh("${CC:-cc} --version | head -1")),
        ("glibc", sh("ldd --version | head -1")),
        ("valgrind", sh("valgrind --version 2>/dev/null") or "not installed"),
        ("strace", sh("strace -V 2>/dev/null | head -1") or "not installed"),
        ("trickle", sh("trickle -V 2>&1 | head -1") if sh("command -v trickle")
         else "not installed"),
    ]


def fmt_rate(wl, x):
    if wl == "throughput":
        return "%.0f MB/s" % x
    if x >= 1e6:
        return "%.3f M calls/s" % (x / 1e6)
    return "%.1f k calls/s" % (x / 1e3)


class Results:
    def __init__(self, runs):
        self.runs = [r for r in runs if r["round"] > 0]  # 0 is the warm-up
        self.by = {}
        for r in self.runs:
            self.by.setdefault((r["wl"], r["cfg"]), {})[r["round"]] = r

    def configs(self, wl):
        seen = []
        for r in self.runs:
            if r["wl"] == wl and r["cfg"] not in seen:
                seen.append(r["cfg"])
        return seen

    def workloads(self):
        seen = []
        for r in self.runs:
            if r["wl"] not in seen:
                seen.append(r["wl"])
        return seen

    def values(self, wl, cfg, key):
        return [r[key] for r in self.by.get((wl, cfg), {}).values()]

    def paired(self, wl, cfg, base, fn):
        """fn(run_cfg, run_base) for each round both ran."""
        a = self.by.get((wl, cfg), {})
        b = self.by.get((wl, base), {})
        return [fn(a[k], b[k]) for k in sorted(a) if k in b]


def metric(wl, kind="wall"):
    """The run's figure, higher is better: wall rate, best-slice rate, or
    work per CPU second."""
    if wl == "throughput":
        return {"wall": "mb_per_s", "best": "best_mb_per_s",
                "cpu": "cpu_s_per_gb"}[kind]
    return {"wall": "calls_per_s", "best": "best_calls_per_s",
            "cpu": "cpu_ns_per_call"}[kind]


def speed(run, wl, kind):
    v = run[metric(wl, kind)]
    return 1.0 / v if kind == "cpu" else v  # CPU per unit: invert


def ratios(res, wl, cfg, base, kind):
    return res.paired(wl, cfg, base,
                      lambda a, b: speed(a, wl, kind) / speed(b, wl, kind))


def cell(rs):
    if not rs:
        return "-"
    return "%.3f (%.3f–%.3f)" % (med(rs), min(rs), max(rs))


def workload_table(res, wl, sizes):
    base = "none"
    lines = [
        "| configuration | median, wall | vs no preload: wall | vs no preload: best slice | vs no preload: CPU | added ns/call, best slice | added CPU ns/call | process wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cfg in res.configs(wl):
        vals = res.values(wl, cfg, metric(wl))
        added = res.paired(
            wl, cfg, base,
            lambda a, b: a["best_ns_per_call"] - b["best_ns_per_call"])
        added_cpu = res.paired(
            wl, cfg, base,
            lambda a, b: a["cpu_ns_per_call"] - b["cpu_ns_per_call"])
        divs = res.values(wl, cfg, "div")
        div = int(divs[0]) if divs else 1
        label = LABELS.get(cfg, cfg)
        if div != 1:
            label += " (1/%d of the work)" % div
        wall = med(res.values(wl, cfg, "wall"))
        if cfg == base:
            spread = 50 * (max(vals) - min(vals)) / med(vals)
            r = ["1 (±%.0f %%)" % spread, "1", "1"]
            add = ["%.0f" % med(res.values(wl, cfg, "best_ns_per_call")),
                   "%.0f" % med(res.values(wl, cfg, "cpu_ns_per_call"))]
        else:
            r = [cell(ratios(res, wl, cfg, base, k))
                 for k in ("wall", "best", "cpu")]
            add = ["%+.1f" % med(added), "%+.1f" % med(added_cpu)]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %.3f |" % (
            label, fmt_rate(wl, med(vals)), r[0], r[1], r[2], add[0], add[1],
            wall))
    return lines


def parse_instr(path):
    rows = {}
    if not path or not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 7 and cells[1] and cells[1][0].isdigit():
                rows[cells[0]] = cells
    return rows


def verdict(ok):
    return "met" if ok else "**missed**"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument("--instr", default="")
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mem-rounds", type=int, default=3)
    ap.add_argument("--tool-div", type=int, default=10)
    ap.add_argument("--manyfds", type=int, default=10000)
    ap.add_argument("--tools", default="")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--pin", default="")
    a = ap.parse_args()

    res = Results(parse_raw(a.raw))
    sizes = {k: "{:,}".format(int(v)) for k, v in
             (x.split("=") for x in a.sizes.split())}
    nfds = a.manyfds
    sizes.update(nfds="{:,}".format(nfds), npairs="{:,}".format(nfds // 2))
    wl_big = "manyfds-%d" % nfds
    mem_big = "memory-%d" % nfds

    out = []
    out.append("# sockmeter benchmarks")
    out.append("")
    out.append("Written by `make bench` (tests/bench/run.sh, "
               "tests/bench/report.py); refresh it by running that command "
               "again. Issue 3 defines the workloads and the targets.")
    out.append("")
    out.append("## Machine and command")
    out.append("")
    out.append("| | |")
    out.append("|---|---|")
    for k, v in machine():
        out.append("| %s | %s |" % (k, v.replace("|", "/")))
    out.append("| command | `%s` |" % a.command)
    out.append("| date | %s |" % time.strftime("%Y-%m-%d %H:%M UTC",
                                               time.gmtime()))
    out.append("| suite wall time | %.0f s (build excluded) |" % a.seconds)
    out.append("")

    # --- targets ---------------------------------------------------------
    t = []

    def figure(wl, cfg, base="none"):
        """(verdict value, text): best-slice ratio, wall and CPU beside."""
        b = ratios(res, wl, cfg, base, "best")
        w = ratios(res, wl, cfg, base, "wall")
        c = ratios(res, wl, cfg, base, "cpu")
        if not b:
            return None, ""
        return med(b), ("best slice %s; whole-loop wall %s; CPU %s"
                        % (cell(b), cell(w), cell(c)))

    v, txt = figure("throughput", "defaults")
    if v is not None:
        t.append(("throughput, workload 1 (defaults / no preload)", "≥ 0.99",
                  txt, verdict(v >= 0.99)))
    for wl, name in (("percall-unix", "unix socketpair"),
                     ("percall-tcp", "TCP loopback")):
        v, txt = figure(wl, "defaults")
        if v is not None:
            t.append(("per-call speed, workload 2, %s (calls/s, defaults / no preload)" % name,
                      "≥ 0.97", txt, verdict(v >= 0.97)))
        vi, txti = figure(wl, "defaults", "idle")
        if vi is not None:
            t.append(("per-call speed, workload 2, %s, against a host with "
                      "the same number of threads (defaults / no preload "
                      "+ one idle thread)" % name,
                      "≥ 0.97", txti, verdict(vi >= 0.97)))
    instr = parse_instr(a.instr)
    st = instr.get("defaults, single-threaded host (incl. glibc)")
    idle = instr.get("no preload, one idle thread (reference)")
    for label, budget, name in (
            ("defaults (library's own, same thread count)", 40, "defaults"),
            ("enabled = false", 10, "enabled = false"),
            ("all but latency (library's own, same threads)", 60,
             "all categories but latency")):
        if label in instr:
            fig = float(instr[label][1])
            txt = "%.1f" % fig
            if label != "enabled = false" and idle and st:
                txt += (" (library's own; in a single-threaded host %.1f, "
                        "of which %.1f are glibc's multi-thread path: see "
                        "the instruction table)"
                        % (float(st[1]), float(idle[1])))
            t.append(("added instructions per call, %s" % name,
                      "≤ %d" % budget, txt, verdict(fig <= budget)))
        else:
            t.append(("added instructions per call, %s" % label,
                      "≤ %d" % budget, "not measured (no valgrind)", "?"))

    # fds: the per-call cost relative to no preload at the same fd count.
    def rel_ns(wl, kind):
        key = "best_ns_per_call" if kind == "best" else "ns_per_call"
        return res.paired(wl, "defaults", "none",
                          lambda x, y: x[key] / y[key])

    def flat(small, big):
        return [b / s for s, b in zip(small, big)]

    pb = flat(rel_ns("manyfds-10", "best"), rel_ns(wl_big, "best"))
    pw = flat(rel_ns("manyfds-10", "wall"), rel_ns(wl_big, "wall"))
    if pb:
        fig = "best slice %s; whole-loop wall %s" % (cell(pb), cell(pw))
        i10 = instr.get("defaults, 10 sockets round-robin")
        i10k = instr.get("defaults, %d sockets round-robin" % nfds)
        if i10 and i10k:
            fig += "; added instructions %s → %s" % (i10[1], i10k[1])
        t.append(("per-call cost, 10 → %d fds: (defaults ÷ no preload, ns "
                  "per call, at %d) ÷ (the same at 10)" % (nfds, nfds),
                  "≤ 1.10", fig, verdict(med(pb) <= 1.10)))
    for b in ("3600", "86400"):
        pb = res.paired("window", "history-" + b, "history-60",
                        lambda x, y: x["best_ns_per_call"] / y["best_ns_per_call"])
        pw = res.paired("window", "history-" + b, "history-60",
                        lambda x, y: x["ns_per_call"] / y["ns_per_call"])
        if pb:
            fig = "best slice %s; whole-loop wall %s" % (cell(pb), cell(pw))
            iw = instr.get("defaults but a day of 1 s history (unix pair)")
            idf = instr.get("defaults")
            if b == "86400" and iw and idf:
                fig += "; added instructions %s → %s" % (idf[1], iw[1])
            t.append(("per-call cost, 60 → %s s of history at 1 s buckets "
                      "(ns per call ÷ ns per call at 60 s)" % b, "≤ 1.10", fig,
                      verdict(med(pb) <= 1.10)))

    mem = {}
    for wl in ("memory-10", "memory-2000", mem_big):
        for cfg in ("none", "off", "defaults", "day", "largest"):
            v = res.values(wl, cfg, "hwm_kb")
            if v:
                mem[(wl, cfg)] = med(v)
    if all(k in mem for k in (("memory-10", "none"), ("memory-10", "defaults"),
                              (mem_big, "none"), (mem_big, "defaults"))):
        fixed_kb = mem[("memory-10", "defaults")] - mem[("memory-10", "none")]
        big_kb = mem[(mem_big, "defaults")] - mem[(mem_big, "none")]
        per_fd = (big_kb - fixed_kb) * 1024 / (nfds - 10)
        gross = big_kb * 1024 / nfds
        t.append(("memory per tracked fd, default windows: (ΔRSS at %d − ΔRSS at 10) ÷ %d"
                  % (nfds, nfds - 10), "≤ 1024 B",
                  "%.0f B (ΔRSS at %d ÷ %d, fixed cost included: %.0f B)"
                  % (per_fd, nfds, nfds, gross), verdict(per_fd <= 1024)))
        t.append(("memory, fixed: ΔRSS with 10 sockets", "≤ 2048 KiB",
                  "%.0f KiB" % fixed_kb, verdict(fixed_kb <= 2048)))
    # Issue 15: windows of any length in bounded memory.
    for cfg, what in (("day", "a day at 1 s (spans 1, 60, 3600, 86400)"),
                      ("largest", "the largest accepted window")):
        keys = [("memory-10", "none"), ("memory-10", cfg), (mem_big, "none"),
                (mem_big, cfg)]
        if not all(k in mem for k in keys):
            continue
        fixed_kb = mem[("memory-10", cfg)] - mem[("memory-10", "none")]
        big_kb = mem[(mem_big, cfg)] - mem[(mem_big, "none")]
        per_fd = (big_kb - fixed_kb) * 1024 / (nfds - 10)
        t.append(("memory per tracked fd, %s: (ΔRSS at %d − ΔRSS at 10) ÷ %d"
                  % (what, nfds, nfds - 10), "< 4096 B",
                  "%.0f B (ΔRSS at %d ÷ %d: %.0f B)"
                  % (per_fd, nfds, nfds, big_kb * 1024 / nfds),
                  verdict(per_fd < 4096)))
    if all(k in mem for k in (("memory-2000", "none"), ("memory-2000", "day"))):
        per_fd = (mem[("memory-2000", "day")] -
                  mem[("memory-2000", "none")]) * 1024 / 2000
        t.append(("memory, 2,000 open sockets with a day at 1 s: (ΔRSS) ÷ "
                  "2000, fixed cost included", "< 4096 B", "%.0f B" % per_fd,
                  verdict(per_fd < 4096)))

    out.append("## Targets")
    out.append("")
    out.append("| figure | target | measured | verdict |")
    out.append("|---|---|---|---|")
    for row in t:
        out.append("| %s | %s | %s | %s |" % row)
    out.append("")

    # --- per workload ------------------------------------------------------
    out.append("## Wall-clock results")
    out.append("")
    out.append(
        "Medians of %d counted rounds after one warm-up round; within a round "
        "every configuration of every workload ran once, back to back "
        "(A B C … A B C …). Each run times its measured loop three ways "
        "(start-up, socket set-up and the exit record are outside it):"
        % a.rounds)
    out.append("")
    out.append(
        "- *wall*: CLOCK_MONOTONIC over the whole loop. *median, wall* is "
        "MB/s (workload 1) or wrapped calls per second (each send, recv, "
        "read or write is one call).")
    out.append(
        "- *best slice*: the loop runs as 10 equal slices, each timed; the "
        "fastest slice stands for the run. Other sessions share this "
        "machine, and a slice they preempt is simply not the fastest, so "
        "this is the figure the verdicts use. (Workload 5 runs two threads "
        "and is not sliced: there best slice = wall.)")
    out.append(
        "- *CPU*: CLOCK_PROCESS_CPUTIME_ID over the loop, every thread of "
        "the process (the preload's ticker included): time running, not "
        "waiting.")
    out.append("")
    out.append(
        "*vs no preload* cells are the median of the per-round ratios "
        "(speed of the configuration ÷ speed of no preload in the same "
        "round; above 1 is faster) with the lowest and highest per-round "
        "ratio in brackets: the noise of one round. For no preload itself "
        "the ± is half the spread of its wall figures, and the *added* "
        "columns show its own ns per call. *added ns/call* columns are "
        "median per-round differences in ns per wrapped call. *process "
        "wall s* is the whole process as the driver saw it (exec, start-up "
        "and exit included).")
    out.append("")
    for wl in res.workloads():
        if wl.startswith("memory-"):
            continue
        title_key = "manyfds-N" if wl == wl_big else wl
        title = WORKLOAD_TITLES.get(title_key, wl).format(**sizes)
        out.append("### " + title)
        out.append("")
        out.extend(workload_table(res, wl, sizes))
        out.append("")

    # --- memory ------------------------------------------------------------
    if mem:
        out.append("## Memory")
        out.append("")
        out.append(
            "Peak RSS (VmHWM, read by loadgen itself) of `loadgen manyfds S "
            "N 1.5`: S sockets (S/2 socketpairs, every one moving data), then "
            "1.5 s of sleep so the preload's ticker (1 s buckets) has sampled "
            "every fd and allocated its window before the peak is read. "
            "Median of %d rounds; kernel socket memory is not in RSS, so the "
            "difference to no preload is the library's." % a.mem_rounds)
        out.append("")
        out.append(
            "*day* is `[window] bucket = 1`, `buckets = 86400`, `spans = 1, "
            "60, 3600, 86400` (tiers of 60 × 1 s, 60 × 60 s and 60 × 1440 s: "
            "a 2,480-byte window); *largest* is `spans = 14352, 18560, "
            "47994, 84284` at 1 s, whose four 64-bit tiers fill the "
            "window's whole budget of 3,072 bytes (no accepted configuration "
            "plans more).")
        out.append("")
        out.append("| sockets | no preload | enabled = false | defaults | defaults − no preload | day | day − no preload | largest | largest − no preload |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

        def kib(v):
            return "%.0f KiB" % v if v else "-"

        for wl, n in (("memory-10", 10), ("memory-2000", 2000),
                      (mem_big, nfds)):
            none = mem.get((wl, "none"))
            if none is None:
                continue
            cells = [kib(mem.get((wl, "off")))]
            for cfg in ("defaults", "day", "largest"):
                v = mem.get((wl, cfg))
                cells += [kib(v), kib(v - none) if v else "-"]
            out.append("| %d | %s | %s |" % (n, kib(none), " | ".join(cells)))
        out.append("")

    # --- instructions ------------------------------------------------------
    if a.instr and os.path.exists(a.instr):
        out.append("## Instructions added per wrapped call (callgrind)")
        out.append("")
        out.append(
            "From `tests/bench/instr.sh` (`make bench-instr`; `make "
            "test-instr` fails on a missed budget): `loadgen percall unix N` "
            "and `2N` under `valgrind --tool=callgrind`, collecting only "
            "inside the measured loop (`--toggle-collect`, per thread, so the "
            "preload's ticker thread is not counted); added per call = "
            "((I(2N) − I(N)) − (I_none(2N) − I_none(N))) / 2N. *whole process* "
            "is the same difference with everything collected, all threads, "
            "start-up and exit included. *instr/call* is what one wrapped "
            "call costs in the loop under that configuration (libc and the "
            "loop's own instructions included), *no preload* the same "
            "without the library. Note that defaults already have every "
            "category but latency on, so those two rows are the same "
            "configuration under two budgets.")
        out.append("")
        with open(a.instr) as f:
            out.extend(line.rstrip("\n") for line in f)
        out.append("")
        idle = instr.get("no preload, one idle thread (reference)")
        mt = instr.get("defaults (library's own, same thread count)")
        dflt = instr.get("defaults, single-threaded host (incl. glibc)")
        if idle and mt and dflt:
            out.append(
                "Of the %s instructions that defaults add to a call in a "
                "single-threaded program, %s are glibc's: once the ticker "
                "thread exists, send/recv leave glibc's single-thread fast "
                "path (`__pthread_enable_asynccancel` / "
                "`__pthread_disable_asynccancel` around the system call), as "
                "the idle-thread reference shows without any preload. The "
                "library's own code adds %s (the preload in a program that "
                "already has a second thread, against that program without "
                "it)." % (dflt[1], idle[1], mt[1]))
            out.append("")

    # --- method ------------------------------------------------------------
    out.append("## How these were measured")
    out.append("")
    out.append("- Load generator: `tests/bench/loadgen.c` (built with -O2 into "
               "build/bench/loadgen). Each run prints one `RESULT key=value …` "
               "line.")
    out.append("- Configurations: one ini file each, generated into a "
               "temporary directory, log path in that directory and "
               "`interval = 86400` (records at exit only). *only X* sets "
               "every `[stats]` key false but X. `strace -c -f` and trickle "
               "(`trickle -s -u 100000000 -d 100000000`, KB/s, far above any "
               "traffic here) run where installed (`command -v`); the suite "
               "never installs them. Found this run: %s."
               % (a.tools or "neither"))
    out.append("- Sizes: workload 1 moves %s bytes (the original report's "
               "2.4 GB) under no preload, enabled = false, defaults, every "
               "category and trickle; the per-category configurations run "
               "only the per-call workloads, where a per-call cost shows "
               "(a 64 KiB write costs ~13 µs, so no category can be seen in "
               "workload 1). strace is slow per call, so it does 1/%d of the "
               "iterations in the per-call workloads and 1/4 of the bytes in "
               "workload 1; rates stay comparable, its process wall time does "
               "not; its CPU column counts the traced program only, not "
               "strace itself." % (sizes.get("bytes", "?"), a.tool_div))
    out.append("- Many fds: %d sockets = %d socketpairs, every socket a "
               "tracked fd. The issue's 10,000 connections held as 20,000 "
               "fds in one process do not fit this machine's RLIMIT_NOFILE "
               "hard limit of %s (stdin, stdout and stderr come on top; "
               "raising the hard limit fails with EPERM here, and the "
               "library meters only fds below the hard limit it reads at "
               "start-up)." % (nfds, nfds // 2, sh("ulimit -Hn")))
    out.append("- Pinning: %s" % (
        "the single-threaded workloads (2, 3, 4 and memory) run as `%s "
        "loadgen …` so the scheduler cannot migrate them mid-run; the "
        "throughput and thread workloads need both CPUs and run unpinned."
        % a.pin if a.pin else "none (BENCH_PIN=0 or no taskset)."))
    out.append("- *no preload, plus one idle thread* is loadgen run with "
               "LOADGEN_IDLE_THREAD=1: one extra thread that only sleeps, as "
               "the preload's ticker does. Once a process has a second "
               "thread, glibc's cancellable calls (send, recv, read, write…) "
               "leave their single-thread fast path, so this row is the "
               "part of the preload's cost that comes from having a ticker "
               "thread at all, whatever the wrapper does.")
    out.append("- The whole suite must stay under 5 minutes on 2 cores; the "
               "knobs (BENCH_ROUNDS, BENCH_BYTES, …) are listed at the top "
               "of tests/bench/run.sh.")
    out.append("")

    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if a.out:
        text += kept_sections(a.out)
        with open(a.out, "w") as f:
            f.write(text)
        sys.stderr.write("wrote %s\n" % a.out)


def kept_sections(path):
    """The sections that other benchmarks write into the same file, each
    between <!-- NAME --> and <!-- /NAME --> (make bench-tools): kept as
    they are when this one rewrites the file."""
    try:
        old = open(path).read()
    except OSError:
        return ""
    blocks = re.findall(r"^<!-- ([a-z-]+) -->\n.*?^<!-- /\1 -->$", old,
                        re.S | re.M)
    out = ""
    for name in blocks:
        m = re.search(r"^<!-- %s -->\n.*?^<!-- /%s -->$" % (name, name), old,
                      re.S | re.M)
        out += "\n" + m.group(0) + "\n"
    return out


if __name__ == "__main__":
    main()
