#!/usr/bin/env python3
"""churn_report.py - the Markdown section of tests/bench/churn.sh.

usage: churn_report.py RAW ROUNDS SECONDS AB_N HAVE_NGINX

RAW: one run per line, "round<TAB>workload<TAB>config<TAB>key=value ...".
Round 0 is the warm-up and is left out.  Ratios are per round (the
configuration against no preload in the same round), then the median with
the lowest and highest in brackets.
"""
import statistics
import sys


def parse(path):
    runs = []
    with open(path) as f:
        for line in f:
            rnd, wl, cfg, rest = line.rstrip("\n").split("\t")
            r = {"round": int(rnd), "wl": wl, "cfg": cfg}
            for kv in rest.split():
                if "=" not in kv:
                    continue
                k, v = kv.split("=", 1)
                try:
                    r[k] = float(v)
                except ValueError:
                    r[k] = v
            if r["round"] > 0:
                runs.append(r)
    return runs


def pick(runs, wl, cfg):
    return {r["round"]: r for r in runs if r["wl"] == wl and r["cfg"] == cfg}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def ratio_cell(runs, wl, cfg, key, base="none"):
    a, b = pick(runs, wl, cfg), pick(runs, wl, base)
    rs = [a[k][key] / b[k][key] for k in sorted(a) if k in b and b[k][key]]
    if not rs:
        return "-", None
    return "%.3f (%.3f–%.3f)" % (med(rs), min(rs), max(rs)), med(rs)


def value(runs, wl, cfg, key):
    return med([r[key] for r in pick(runs, wl, cfg).values()])


def most(runs, wl, cfg, key):
    vs = [r.get(key, 0) for r in pick(runs, wl, cfg).values()]
    return int(max(vs)) if vs else 0


def cpu_per_conn(r):
    """Microseconds of the process's CPU per connection, or None."""
    if "cpu_s" not in r or not r.get("conns"):
        return None
    return r["cpu_s"] / r["conns"] * 1e6


def cpu_cell(runs, wl, cfg):
    xs = [cpu_per_conn(r) for r in pick(runs, wl, cfg).values()]
    xs = [x for x in xs if x is not None]
    return "%.1f µs" % med(xs) if xs else "–"


def conn_rows(runs, wl, cfgs, out):
    """The rows of a short-connection table (workload wl) into out;
    returns the defaults' ratio cell and median (None: not run)."""
    got = ("-", None)
    for cfg, label in cfgs:
        if not pick(runs, wl, cfg):
            continue
        cell, m = ratio_cell(runs, wl, cfg, "conns_per_s")
        if cfg == "none":
            cell = "1"
        out.append("| %s | %.0f | %s | %s | %d |" % (
            label, value(runs, wl, cfg, "conns_per_s"), cell,
            cpu_cell(runs, wl, cfg), most(runs, wl, cfg, "dropped")))
        if cfg == "defaults":
            got = (cell, m)
    return got


def syscall_section(runs):
    """What a system call costs here, and how many a connection makes."""
    out = []
    cost = list(pick(runs, "syscost", "none").values())
    if not cost:
        return out
    null = med([r["null_us"] for r in cost])
    name = med([r["getsockname_us"] for r in cost])
    info = med([r["tcp_info_us"] for r in cost])
    out.append("### What a system call costs here")
    out.append("")
    out.append(
        "`syscost` (tests/bench/syscost.c), once a round, medians: the "
        "cheapest system call (`getppid`) %.2f µs, `getsockname` on a TCP "
        "socket %.2f µs, `getsockopt(TCP_INFO)` %.2f µs. With the defaults "
        "a metered connection adds, at each end, its local address "
        "(`getsockname` after `connect` or `accept`) and the kernel's view "
        "at close (`TCP_INFO`): `tcp_info = false, peers = false` takes "
        "them off." % (null, name, info))
    counted = {}
    for cfg in ("none", "defaults", "lean"):
        for r in pick(runs, "syscalls", cfg).values():
            if r.get("syscalls") and r.get("conns"):
                counted[cfg] = r["syscalls"] / r["conns"]
    if "none" in counted:
        out.append("")
        out.append(
            "System calls per connection, both ends, counted by `perf stat "
            "-e raw_syscalls:sys_enter` over one 1-s run each (the ring's "
            "first lap, whose chunks are backed once, included):")
        out.append("")
        out.append("| configuration | system calls per connection | added | their price at %.2f µs each |" % ((name + info) / 2))
        out.append("|---|---:|---:|---:|")
        base = counted["none"]
        nocpu = [cpu_per_conn(r) for r in pick(runs, "churn", "none").values()]
        nocpu = [x for x in nocpu if x is not None]
        for cfg, label in (("none", "no preload"), ("defaults", "defaults"),
                           ("lean", "tcp_info = false, peers = false")):
            if cfg not in counted:
                continue
            add = counted[cfg] - base
            price = add * (name + info) / 2
            share = (" (%.1f %% of a connection's CPU without the preload)"
                     % (100 * price / med(nocpu)) if nocpu and cfg != "none"
                     else "")
            out.append("| %s | %.2f | %s | %s |" % (
                label, counted[cfg], "" if cfg == "none" else "%+.2f" % add,
                "" if cfg == "none" else "%.1f µs%s" % (price, share)))
    out.append("")
    return out


def main():
    raw, rounds, secs, ab_n, have_nginx = sys.argv[1:6]
    runs = parse(raw)
    out = ["## Churn: short connections, fork, a real server (issue 9)", ""]
    out.append(
        "From `tests/bench/churn.sh` (`tests/bench/churngen.c`), run by "
        "`make bench` after the workloads above: %s counted rounds after a "
        "warm-up, configurations alternating within each round, %s s per "
        "run. Ratios are per round against no preload in the same round: "
        "median (lowest–highest). *dropped* is the most close records any "
        "run of that row dropped (`close_records_dropped`)." % (rounds, secs))
    out.append("")
    out.append("### Short connections, both ends in one process")
    out.append("")
    out.append(
        "`churngen churn`: a client thread connects over TCP loopback, sends "
        "64 bytes, reads a 256-byte reply and closes; the server thread "
        "accepts, reads, replies and closes; as fast as the machine allows. "
        "Two close records per connection.")
    out.append("")
    out.append("| configuration | connections/s | vs no preload | CPU per connection | dropped |")
    out.append("|---|---:|---:|---:|---:|")
    verdicts = []
    cell, m = conn_rows(runs, "churn", (
        ("none", "no preload"), ("off", "enabled = false"),
        ("defaults", "defaults (text records)"), ("json", "format = json"),
        ("records-off", "close_records = off"),
        ("lean", "tcp_info = false, peers = false")), out)
    if m is not None:
        verdicts.append(("short connections, defaults / no preload",
                         "≥ 0.97", cell, m >= 0.97))
        d = most(runs, "churn", "defaults", "dropped")
        verdicts.append(("close records dropped, defaults", "0", str(d),
                         d == 0))
    out.append("")
    out.append(
        "*CPU per connection*: the process's CPU time (both ends, the "
        "ticker, `getrusage`) over its connections, median over the rounds.")
    out.append("")
    if pick(runs, "churn2", "none"):
        out.append("### Short connections, two pairs at once")
        out.append("")
        out.append(
            "Two `churngen churn` processes at once, per configuration: one "
            "client/server pair leaves these 2 cores about half idle (each "
            "connection waits on its own wake-ups), two keep both busy, "
            "which is the highest rate the machine allows. Sums over the "
            "two processes; CPU per connection as above.")
        out.append("")
        out.append("| configuration | connections/s | vs no preload | CPU per connection | dropped |")
        out.append("|---|---:|---:|---:|---:|")
        cell, m = conn_rows(runs, "churn2", (("none", "no preload"),
                                             ("defaults", "defaults")), out)
        if m is not None:
            verdicts.append((
                "short connections, two pairs at once (both cores "
                "busy), defaults / no preload", "≥ 0.97", cell, m >= 0.97))
        out.append("")
    out.extend(syscall_section(runs))
    out.append("### The ticker's cost per close record")
    out.append("")
    out.append(
        "CPU time of the preload's ticker thread (`/proc/self/task/*/"
        "schedstat` of the thread named sockmeter, read after a 1.3 s pause "
        "that lets it write the last records) per 1,000 close records, in "
        "the short-connection runs above; the host's connections/s beside "
        "it.")
    out.append("")
    out.append("| records | ticker CPU per 1,000 close records | connections/s | vs no preload |")
    out.append("|---|---:|---:|---:|")
    for cfg, label in (("defaults", "text"), ("json", "JSON"),
                       ("records-off", "none (close_records = off)")):
        rs = pick(runs, "churn", cfg).values()
        if not rs:
            continue
        per = med([r["ticker_cpu_s"] / r["closes"] * 1000 * 1000
                   for r in rs])
        cell, _ = ratio_cell(runs, "churn", cfg, "conns_per_s")
        out.append("| %s | %.2f ms | %.0f | %s |" % (
            label, per, value(runs, "churn", cfg, "conns_per_s"), cell))
    out.append("")
    out.append("### fork under churn")
    out.append("")
    out.append(
        "`churngen forks`: the same churn in two threads while the main "
        "thread forks children that `_exit(0)` at once, one at a time: a "
        "pre-fork server's cost while its close records are being written.")
    out.append("")
    out.append("| configuration | forks/s | vs no preload | connections/s meanwhile |")
    out.append("|---|---:|---:|---:|")
    for cfg, label in (("none", "no preload"), ("defaults", "defaults")):
        if not pick(runs, "forks", cfg):
            continue
        cell, m = ratio_cell(runs, "forks", cfg, "forks_per_s")
        if cfg == "none":
            cell = "1"
        out.append("| %s | %.0f | %s | %.0f |" % (
            label, value(runs, "forks", cfg, "forks_per_s"), cell,
            value(runs, "forks", cfg, "conns_per_s")))
        if cfg == "defaults" and m is not None:
            verdicts.append(("forks/s under churn, defaults / no preload",
                             "≥ 0.90", cell, m >= 0.90))
    out.append("")
    if have_nginx == "1":
        out.append("### nginx + ab")
        out.append("")
        out.append(
            "nginx (Debian's, 1 worker, access log off) serving a 10 KiB "
            "file to `ab -n %s -c 10` (no keep-alive: one connection per "
            "request), alternating with and without the preload." % ab_n)
        out.append("")
        out.append("| configuration | requests/s | vs no preload | dropped |")
        out.append("|---|---:|---:|---:|")
        for cfg, label in (("none", "no preload"), ("defaults", "defaults")):
            cell, m = ratio_cell(runs, "nginx", cfg, "reqs_per_s")
            if cfg == "none":
                cell = "1"
            out.append("| %s | %.0f | %s | %d |" % (
                label, value(runs, "nginx", cfg, "reqs_per_s"), cell,
                most(runs, "nginx", cfg, "dropped")))
            if cfg == "defaults":
                d = most(runs, "nginx", cfg, "dropped")
                verdicts.append(("nginx close records dropped", "0", str(d),
                                 d == 0))
        out.append("")
    out.append("### Targets")
    out.append("")
    out.append("| figure | target | measured | verdict |")
    out.append("|---|---|---|---|")
    for name, target, got, ok in verdicts:
        out.append("| %s | %s | %s | %s |" % (name, target, got,
                                             "met" if ok else "**missed**"))
    out.append("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
