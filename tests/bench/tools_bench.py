#!/usr/bin/env python3
"""tools_bench.py - the tools benchmark (`make bench-tools`).

    tools_bench.py BUILD_DIR [--out BENCHMARKS.md]

1. Records a real run: tests/bench/tools_workload.py (a TCP server and its
   clients, 300 short connections and 2 long streams over 3 s) under the
   preload, once in JSON and once in text; the mean bytes per record by
   type and format (and, with BENCH_TOOLS_BEFORE_LIB=/path/to/an/older/
   libsockmeter.so, the same for that library, side by side).
2. sockmeter-report on logs made from those records by tests/bench/
   tools_gen.py (4 processes, 1,000 peer hosts, 1,000 close records/s,
   one interval record per process per second) of 10^5, 10^6 and 10^7
   records: wall and CPU seconds, records/s and peak RSS of the report
   process (os.wait4).  10^5 and 10^6 are files; 10^7 (about 5 GB) is
   piped from the generator into the report's stdin and never written.
   Also --since keeping the last tenth of the 10^6 log (the skip path).
3. sockmeter top: the first screen (--once, the whole process) on a
   directory of 2,000 logs and on a 1 GB log, peak RSS; and one redraw of
   the 1 GB log after 1,000 records were appended (tests/bench/
   tools_top.py): its time and the bytes it read.
Writes the results as a section of BENCHMARKS.md between the markers
<!-- bench-tools --> and <!-- /bench-tools --> (the rest of the file is
left as it is).  Everything it generates lives in one temp directory,
removed at the end.  BENCH_TOOLS_MAX (default 10000000) caps the largest
log; BENCH_TOOLS_GB (default 1) sizes top's big log.
"""
import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
REPORT = os.path.join(TOP, "scripts", "sockmeter-report")
TOPCMD = os.path.join(TOP, "scripts", "sockmeter-top")
GEN = os.path.join(HERE, "tools_gen.py")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable
BEGIN, END = "<!-- bench-tools -->", "<!-- /bench-tools -->"


def run_measured(argv, stdin=None, stdout=subprocess.DEVNULL, env=None):
    """Run argv; (wall s, cpu s, peak RSS KiB, status) of that process."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=stdin, stdout=stdout,
                         stderr=subprocess.PIPE, env=env)
    if stdin is not None and stdin is not subprocess.DEVNULL:
        stdin.close()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("tools_bench.py: %s failed: %s" % (argv[0], err[-500:]))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def real_run(lib, tmp, fmt, tag):
    d = os.path.join(tmp, "real-%s-%s" % (tag, fmt))
    os.makedirs(d)
    env = dict(os.environ, LD_PRELOAD=lib, SOCKMETER_FORMAT=fmt,
               SOCKMETER_INTERVAL="0.5",
               SOCKMETER_LOG=os.path.join(d, "%n.%p.log"))
    for k in ("SOCKMETER_CONFIG", "SOCKMETER"):
        env.pop(k, None)
    subprocess.run([PY, os.path.join(HERE, "tools_workload.py"), "3", "300"],
                   env=env, check=True)
    logs = [os.path.join(d, f) for f in os.listdir(d)]
    out = subprocess.run([PY, os.path.join(HERE, "record_sizes.py")] + logs,
                         capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        f, typ, mean, n = line.split()
        sizes[(f, typ)] = (float(mean), int(n))
    return logs[0], sizes


def gen_file(tpl, n, path):
    subprocess.run([PY, GEN, tpl, str(n), "--out", path], check=True)


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%d cores (nproc), %s, Linux %s, %s" % (
        os.cpu_count(), cpu, platform.release(),
        subprocess.run([PY, "--version"], capture_output=True,
                       text=True).stdout.strip())


def fmt_n(n):
    return "10^%d" % (len(str(n)) - 1) if str(n).strip("0") == "1" \
        else "{:,}".format(n)


def main():
    ap = argparse.ArgumentParser(prog="tools_bench.py")
    ap.add_argument("build")
    ap.add_argument("--out", default=os.path.join(TOP, "BENCHMARKS.md"))
    a = ap.parse_args()
    lib = os.path.abspath(os.path.join(a.build, "libsockmeter.so"))
    nmax = int(os.environ.get("BENCH_TOOLS_MAX", "10000000"))
    gbytes = float(os.environ.get("BENCH_TOOLS_GB", "1"))
    before = os.environ.get("BENCH_TOOLS_BEFORE_LIB", "")
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="sockmeter-bench-tools.")
    try:
        lines = body(lib, before, tmp, nmax, gbytes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines += ["", "Suite wall time: %.0f s (`make bench-tools`)."
              % (time.monotonic() - started), END]
    section = "\n".join(lines)
    sys.stdout.write(section + "\n")
    if a.out:
        write_section(a.out, section)
        sys.stderr.write("wrote the bench-tools section of %s\n" % a.out)


def body(lib, before, tmp, nmax, gbytes):
    out = []
    say = out.append
    sys.stderr.write("bench-tools: real runs\n")
    tpl, sizes = real_run(lib, tmp, "json", "now")
    _, tsizes = real_run(lib, tmp, "text", "now")
    sizes.update(tsizes)
    old = {}
    if before:
        _, old = real_run(before, tmp, "json", "before")
        _, otext = real_run(before, tmp, "text", "before")
        old.update(otext)

    rows = []
    for n in (10 ** 5, 10 ** 6, 10 ** 7):
        if n > nmax:
            continue
        sys.stderr.write("bench-tools: report, %d records\n" % n)
        if n <= 10 ** 6:
            path = os.path.join(tmp, "gen.%d.log" % n)
            gen_file(tpl, n, path)
            size = os.path.getsize(path)
            wall, cpu, rss = run_measured([REPORT, path])
            rows.append((n, "file, %.0f MB" % (size / 1e6), size / n, wall,
                         cpu, rss))
            if n == 10 ** 6:
                with open(path, "rb") as fh:
                    fh.seek(int(size * 0.9))
                    fh.readline()
                    since = json.loads(fh.readline())["ts"]
                wall, cpu, rss = run_measured([REPORT, "--since",
                                               "%.6f" % since, path])
                rows.append((n, "file, --since keeps the last tenth",
                             size / n, wall, cpu, rss))
            os.unlink(path)
        else:
            gen = subprocess.Popen([PY, GEN, tpl, str(n)],
                                   stdout=subprocess.PIPE)
            wall, cpu, rss = run_measured([REPORT, "-"], stdin=gen.stdout)
            gen.wait()
            rows.append((n, "piped from the generator (about %.1f GB)"
                         % (rows[0][2] * n / 1e9), rows[0][2], wall, cpu,
                         rss))

    sys.stderr.write("bench-tools: top on 2,000 logs\n")
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    subprocess.run([PY, GEN, tpl, "50000", "--procs", "2000", "--interval",
                    "10", "--split", many], check=True)
    nlogs = len(os.listdir(many))
    top_dir = run_measured([TOPCMD, "--once", many])
    shutil.rmtree(many)
    sys.stderr.write("bench-tools: top on a %.1f GB log\n" % gbytes)
    big = os.path.join(tmp, "big.log")
    per = rows[0][2] if rows else 520
    gen_file(tpl, int(gbytes * 1e9 / per), big)
    bigsize = os.path.getsize(big)
    top_big = run_measured([TOPCMD, "--once", big])
    redraw = json.loads(subprocess.run(
        [PY, os.path.join(HERE, "tools_top.py"), TOPCMD, big, tpl, "1000"],
        capture_output=True, text=True, check=True).stdout)
    os.unlink(big)

    say(BEGIN)
    say("## Tools on big logs (`make bench-tools`)")
    say("")
    say("Written by `make bench-tools` (tests/bench/tools_bench.py); this "
        "section only. Machine: %s. Date: %s UTC." % (
            machine(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    say("")
    say("The logs are made from the records of a real run "
        "(tests/bench/tools_workload.py under the preload: a TCP server, "
        "300 short connections and 2 long streams) by "
        "tests/bench/tools_gen.py: 4 processes, 1,000 peer hosts, "
        "1,000 close records/s and one interval record per process per "
        "second, the counters and histograms as recorded. Memory is the "
        "peak RSS of the tool's own process (os.wait4); records/s is "
        "records ÷ the tool's CPU time (user + sys) and ÷ wall time. The "
        "machine is shared with other jobs, so wall time is the noisier "
        "of the two.")
    say("")
    say("### sockmeter-report")
    say("")
    say("| records | log | bytes/record | wall s | CPU s | records/s (CPU) "
        "| records/s (wall) | peak RSS |")
    say("|---|---|---|---|---|---|---|---|")
    for n, what, per_rec, wall, cpu, rss in rows:
        say("| %s | %s | %.0f | %.1f | %.1f | %s | %s | %.1f MB |" % (
            fmt_n(n), what, per_rec, wall, cpu,
            "{:,.0f}".format(n / cpu), "{:,.0f}".format(n / wall),
            rss / 1024))
    say("")
    plain = [r for r in rows if "--since" not in r[1]]
    if plain:
        say("Targets (issue 13): at least 100,000 records/s, under 100 MB, "
            "memory flat from the smallest to the largest log:")
        say("")
        say("| figure | target | measured | verdict |")
        say("|---|---|---|---|")
        slow = min(r[0] / r[4] for r in plain)
        sloww = min(r[0] / r[3] for r in plain)
        say("| report records/s, slowest size | ≥ 100,000 | %s (CPU), %s "
            "(wall) | %s |" % ("{:,.0f}".format(slow),
                               "{:,.0f}".format(sloww),
                               "met" if slow >= 1e5 else "**missed**"))
        peak = max(r[5] for r in plain) / 1024
        say("| report peak RSS, largest | < 100 MB | %.1f MB | %s |" % (
            peak, "met" if peak < 100 else "**missed**"))
        ratio = plain[-1][5] / plain[0][5]
        say("| report RSS, %s ÷ %s records | flat | %.2f | %s |" % (
            fmt_n(plain[-1][0]), fmt_n(plain[0][0]), ratio,
            "met" if ratio < 1.5 else "**missed**"))
        say("| top first screen, %d logs (wall) | ≤ 2 s | %.2f s (CPU "
            "%.2f s) | %s |" % (nlogs, top_dir[0], top_dir[1],
                                "met" if top_dir[0] <= 2 else "**missed**"))
        say("| top first screen, %.2f GB log (wall) | ≤ 2 s | %.2f s (CPU "
            "%.2f s) | %s |" % (bigsize / 1e9, top_big[0], top_big[1],
                                "met" if top_big[0] <= 2 else "**missed**"))
        say("| top redraw after 1,000 appended records: bytes read | what "
            "was appended | %s of %s | %s |" % (
                "{:,}".format(redraw["read_bytes"]),
                "{:,}".format(redraw["appended_bytes"]),
                "met" if redraw["read_bytes"] == redraw["appended_bytes"]
                else "**missed**"))
    say("")
    say("### sockmeter top")
    say("")
    say("| what | first screen (`--once`, whole process) | peak RSS |")
    say("|---|---|---|")
    say("| a directory of %d logs (50,000 records, interval 10 s) | %.2f s "
        "(CPU %.2f s) | %.1f MB |" % (nlogs, top_dir[0], top_dir[1],
                                     top_dir[2] / 1024))
    say("| one %.2f GB log (%s records) | %.2f s (CPU %.2f s) | %.1f MB |"
        % (bigsize / 1e9, "{:,}".format(int(bigsize / per)), top_big[0],
           top_big[1], top_big[2] / 1024))
    say("")
    say("On the big log top reads only its last 8 MiB at start (%s bytes "
        "of history not read), and a redraw after 1,000 records were "
        "appended took %.3f s and read %s bytes, the %s appended."
        % ("{:,}".format(redraw["skipped"]), redraw["redraw_s"],
           "{:,}".format(redraw["read_bytes"]),
           "{:,}".format(redraw["appended_bytes"])))
    say("")
    say("### Bytes per record, from the real run")
    say("")
    if old:
        say("Before: the library given as BENCH_TOOLS_BEFORE_LIB (close "
            "records with the process totals in each). Interval and exit "
            "records list the fds active or open at that moment, which "
            "differs from run to run; the close record is the like-for-like "
            "figure.")
        say("")
        say("| format | record | before | now | change |")
        say("|---|---|---|---|---|")
    else:
        say("| format | record | bytes (mean) | records |")
        say("|---|---|---|---|")
    for key in sorted(sizes):
        mean, n = sizes[key]
        if old:
            o = old.get(key)
            say("| %s | %s | %s | %.0f | %s |" % (
                key[0], key[1], "%.0f" % o[0] if o else "-", mean,
                "%+.0f%%" % (100 * (mean - o[0]) / o[0]) if o else "-"))
        else:
            say("| %s | %s | %.0f | %d |" % (key[0], key[1], mean, n))
    return out


def write_section(path, section):
    try:
        text = open(path).read()
    except OSError:
        text = ""
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    if m:
        text = text[:m.start()] + section + text[m.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
