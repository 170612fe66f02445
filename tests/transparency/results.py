#!/usr/bin/env python3
"""results.py - per-test outcomes of a suite run, and their comparison.

  results.py summary FILE            "N tests: P passed, S skipped, F failed"
  results.py compare PLAIN WITH      exit 0 when both runs have the same
                                     tests with the same outcomes; else
                                     print the differing test ids, one per
                                     line ("ID plain=X with=Y"), exit 1
  results.py ids FILE OUTCOME...     the ids with one of these outcomes

FILE is a CPython regrtest --junit-xml file, or the JSON written by
tornado_runner.py.  Outcomes: ok, fail, error, skip, xfail, xpass.
"""
import json
import sys
import xml.etree.ElementTree as ET


def load(path):
    if path.endswith(".json"):
        with open(path) as fh:
            return json.load(fh)["tests"]
    tests = {}
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        kids = {c.tag for c in case}
        if "error" in kids:
            what = "error"
        elif "failure" in kids:
            what = "fail"
        elif "skipped" in kids:
            what = "skip"
        else:
            what = "ok"
        tests[case.get("name")] = what
    return tests


def summary(tests):
    n = len(tests)
    count = lambda *w: sum(1 for v in tests.values() if v in w)
    return ("%d tests: %d passed, %d skipped, %d failed"
            % (n, count("ok", "xfail"), count("skip"),
               count("fail", "error", "xpass")))


def main(argv):
    if len(argv) == 3 and argv[1] == "summary":
        print(summary(load(argv[2])))
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        a, b = load(argv[2]), load(argv[3])
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        for k in diff:
            print("%s plain=%s with=%s" % (k, a.get(k, "absent"),
                                            b.get(k, "absent")))
        return 1 if diff else 0
    if len(argv) >= 4 and argv[1] == "ids":
        tests = load(argv[2])
        for k in sorted(tests):
            if tests[k] in argv[3:]:
                print(k)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
