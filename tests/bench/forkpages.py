#!/usr/bin/env python3
"""tests/bench/forkpages.py - forkpages.sh's count: the distinct pages a
fork child touched, from valgrind lackey's trace of it (one line per
instruction fetch, load, store or modify, by address) and the parent's
/proc/self/maps.

  forkpages.py NONE_DIR PRELOAD_DIR BUDGET ADDED_BUDGET CHECK

Each DIR holds a run's traces (lk.PID, one per process) and the program's
maps.  The child counted is the later of the program's two fork children:
a process whose parent was traced too and that ran the program's own code
(the library's helper processes, made by a raw clone, run none of it).

The library's own pages: those of libsockmeter.so's file mappings and of
the anonymous mappings that follow them without a gap (its zero-filled
variables: sm_core, the fork data page's neighbours).  Exits 1 when CHECK
is 1 and they exceed BUDGET, or the child's pages in all exceed the same
child's without the preload by more than ADDED_BUDGET (what the library
makes a child touch elsewhere: libc, its TLS, the state file); 2 when a
trace cannot be what it should be.
"""
import os
import re
import sys

LINE = re.compile(r"^ ?([ILSM]) +([0-9a-f]+),(\d+)")


def read_maps(path):
    maps = []
    with open(path) as f:
        for line in f:
            p = line.split()
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            maps.append((lo, hi, p[1], p[5] if len(p) > 5 else ""))
    maps.sort()
    return maps


def library_ranges(maps):
    """The library's mappings, and the anonymous ones right after them."""
    out, last_end = [], None
    for lo, hi, _perm, name in maps:
        if name.endswith("/libsockmeter.so"):
            out.append((lo, hi))
            last_end = hi
        elif last_end is not None and not name and lo == last_end:
            out.append((lo, hi))
            last_end = hi
        else:
            last_end = None if out else last_end
    return out


def pages(log):
    seen = set()
    with open(log) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                a, n = int(m.group(2), 16), int(m.group(3))
                seen.add(a >> 12)
                seen.add((a + max(n, 1) - 1) >> 12)
    return seen


def program_code(maps):
    return [(lo, hi) for lo, hi, perm, name in maps
            if name.endswith("/forkpages") and "x" in perm]


def fork_child(d):
    """The trace of the later fork child in run directory d, or None."""
    maps = read_maps(os.path.join(d, "maps"))
    code = program_code(maps)
    logs = {}
    for name in os.listdir(d):
        if name.startswith("lk."):
            logs[int(name[3:])] = os.path.join(d, name)
    found = []
    for pid, log in sorted(logs.items()):
        parent, runs_main = None, False
        with open(log) as f:
            for line in f:
                if parent is None:
                    m = re.match(r"^==\d+== Parent PID: (\d+)", line)
                    if m:
                        parent = int(m.group(1))
                        if parent not in logs:
                            break
                    continue
                m = LINE.match(line)
                if m and m.group(1) == "I":
                    a = int(m.group(2), 16)
                    if any(lo <= a < hi for lo, hi in code):
                        runs_main = True
                        break
        if parent in logs and runs_main:
            found.append(log)
    return (found[-1] if found else None), maps


def main():
    none_dir, pre_dir, budget, added_budget, check = sys.argv[1:6]
    budget, added_budget = int(budget), int(added_budget)
    check = check == "1"
    none_log, _ = fork_child(none_dir)
    pre_log, pre_maps = fork_child(pre_dir)
    if not none_log or not pre_log:
        print("forkpages.py: no fork child's trace", file=sys.stderr)
        return 2
    n_pages = pages(none_log)
    p_pages = pages(pre_log)
    lib = library_ranges(pre_maps)
    if not lib or not n_pages or not p_pages:
        print("forkpages.py: no trace or no library mapping", file=sys.stderr)
        return 2
    mine = sorted(p for p in p_pages
                  if any(lo <= p << 12 < hi for lo, hi in lib))
    # The child ran the library's fork handler and its _exit wrapper: a
    # count of 0 would mean the trace missed them, not that they are free.
    if not mine:
        print("forkpages.py: the child touched none of the library's pages:"
              " its fork handlers did not run under the trace",
              file=sys.stderr)
        return 2
    verdict = "met" if len(mine) <= budget else "MISSED"
    added = len(p_pages) - len(n_pages)
    added_verdict = "met" if added <= added_budget else "MISSED"
    print("pages a fork child touches (valgrind lackey; a child that only "
          "calls _exit(0), of a process with a metered connection and an "
          "idle thread)")
    print("%-40s %6d" % ("all, no preload", len(n_pages)))
    print("%-40s %6d (%+d)  budget <= +%d  %s" % (
        "all, defaults", len(p_pages), added, added_budget, added_verdict))
    print("%-40s %6d  budget <= %d  %s" % ("the library's own, defaults",
                                           len(mine), budget, verdict))
    base = min(lo for lo, _ in lib)
    print("  at library offsets: " +
          " ".join("%#x" % ((p << 12) - base) for p in mine))
    return 1 if check and "MISSED" in (verdict, added_verdict) else 0


if __name__ == "__main__":
    sys.exit(main())
