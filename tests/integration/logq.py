#!/usr/bin/env python3
"""logq.py - read sockmeter JSON Lines logs for the integration tests.

Usage:
  logq.py LOG EXPR          print the value of the Python expression EXPR
  logq.py check LOG EXPR    exit 0 if EXPR is true; else print why, exit 1
  logq.py total LOG KEY     the exit record's totals[KEY]
  logq.py dump LOG          the records, one line each, sizes left out
  logq.py run LOG FILE      execute the Python file FILE with the names
                            below; a failed assert fails (exit 1, message)

LOG is a file name or a glob pattern (all matching files are read, in
name order).  Every line must be a JSON object with a known "type", and a
close record must list exactly one fd: anything else is an error (exit 2),
so a torn or interleaved line fails the test that reads it.  Close
records carry no totals (lean records); the zero fields that fd entries
omit (errors_*, sizes_*) are filled back for the categories that are on.

Names EXPR can use:
  R            every record, in file order
  E            the exit record (error if there is not exactly one)
  T            E["totals"]
  IV           the interval records
  X            the exec records (written just before an exec)
  CL           the fd objects of the close records (one per record)
  closes(**f)  the close-record fds whose fields equal f, e.g.
               closes(kind="tcp", peer="127.0.0.1:8080"); fd=N works too
  efds(**f)    the same among the exit record's fds
  conns(**f)   both: every connection the process had, closed or still
               open at exit (close-record fds, then exit-record fds)
  keys()       the set of every key used anywhere in any record
  tot(k)       T[k];   csum(k, **f)  sum of k over closes(**f)
  json, math   the modules
Values print as JSON (true/false for booleans, numbers as they are).
"""
import glob
import json
import math
import sys

TYPES = ("interval", "close", "exit", "exec")


class LogError(Exception):
    pass


def load(pattern):
    files = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") \
        else [pattern]
    if not files:
        raise LogError("no log file matches %s" % pattern)
    records = []
    for name in files:
        try:
            with open(name, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except OSError as e:
            raise LogError("cannot read %s: %s" % (name, e.strerror))
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:
            raise LogError("%s: last line is not terminated" % name)
        for no, line in enumerate(lines, 1):
            try:
                r = json.loads(line)
            except ValueError as e:
                raise LogError("%s:%d: not JSON (%s): %.120s"
                               % (name, no, e, line))
            if not isinstance(r, dict) or r.get("type") not in TYPES:
                raise LogError("%s:%d: not a record: %.120s"
                               % (name, no, line))
            # Close records are lean: no totals (those live in the
            # interval and exit records).
            if not isinstance(r.get("fds"), list) or \
                    isinstance(r.get("totals"), dict) != \
                    (r["type"] != "close"):
                raise LogError("%s:%d: record without fds, or totals where "
                               "the schema has none" % (name, no))
            if r["type"] == "close" and len(r["fds"]) != 1:
                raise LogError("%s:%d: close record lists %d fds"
                               % (name, no, len(r["fds"])))
            records.append(r)
    fill_zeros(records)
    return records


# Fields an fd entry leaves out when zero (the log schema), and the zero
# they stand for.  The totals always carry them when their category is on.
OMITTED_ZEROS = {
    "errors_in": lambda: {"again": 0, "intr": 0, "other": 0},
    "errors_out": lambda: {"again": 0, "intr": 0, "other": 0},
    "sizes_in": lambda: [0] * 24,
    "sizes_out": lambda: [0] * 24,
}


def fill_zeros(records):
    """Put back the zero fields that fd entries omit, for the categories
    that were on (their keys are in the totals), so tests can index them."""
    on = set()
    for r in records:
        on.update(k for k in r.get("totals", ()) if k in OMITTED_ZEROS)
    for r in records:
        for f in r["fds"]:
            for k in on:
                if k not in f:
                    f[k] = OMITTED_ZEROS[k]()


def all_keys(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            all_keys(v, out)
    elif isinstance(obj, list):
        for v in obj:
            all_keys(v, out)
    return out


def matching(fds, f):
    return [x for x in fds if all(x.get(k) == v for k, v in f.items())]


def namespace(records):
    exits = [r for r in records if r["type"] == "exit"]
    closes_l = [r["fds"][0] for r in records if r["type"] == "close"]

    def exit_record():
        if len(exits) != 1:
            raise LogError("expected exactly one exit record, found %d"
                           % len(exits))
        return exits[0]

    class NoExit:
        """Stands for E/T when there is not exactly one exit record."""
        def __getitem__(self, key):
            exit_record()

        def get(self, *a):
            exit_record()

    e = exits[0] if len(exits) == 1 else NoExit()
    ns = dict(
        R=records,
        E=e,
        T=e["totals"] if len(exits) == 1 else e,
        IV=[r for r in records if r["type"] == "interval"],
        X=[r for r in records if r["type"] == "exec"],
        CL=closes_l,
        closes=lambda **f: matching(closes_l, f),
        efds=lambda **f: matching(exit_record()["fds"], f),
        conns=lambda **f: matching(closes_l + exit_record()["fds"], f),
        keys=lambda: all_keys(records, set()),
        tot=lambda k: exit_record()["totals"][k],
        csum=lambda k, **f: sum(x[k] for x in matching(closes_l, f)),
        json=json,
        math=math,
        __builtins__=__builtins__,
    )
    return ns


def evaluate(pattern, expr):
    return eval(expr, namespace(load(pattern)))


def show(v):
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True)


def brief(r):
    r = json.loads(json.dumps(r))
    for obj in [r.get("totals", {})] + r.get("fds", []):
        for k in ("sizes_in", "sizes_out"):
            if k in obj:
                obj[k] = "..."
    return json.dumps(r, sort_keys=True)


def main(argv):
    try:
        if len(argv) == 3 and argv[1] not in ("check", "total", "dump", "run"):
            print(show(evaluate(argv[1], argv[2])))
            return 0
        if len(argv) == 4 and argv[1] == "check":
            v = evaluate(argv[2], argv[3])
            if v:
                return 0
            print("check failed: %s (value %s)" % (argv[3], show(v)))
            return 1
        if len(argv) == 4 and argv[1] == "total":
            print(show(evaluate(argv[2], "T[%r]" % argv[3])))
            return 0
        if len(argv) == 4 and argv[1] == "run":
            ns = namespace(load(argv[2]))
            with open(argv[3], encoding="utf-8") as fh:
                text = fh.read()
            # A checks file without a single assert checks nothing: an
            # unbound $name in the test's unquoted here-document (set -u)
            # leaves it empty, and that passed for a long time.
            if "assert" not in text:
                print("check failed: %s holds no assert (empty: an "
                      "unbound variable in its here-document?)" % argv[3])
                return 1
            code = compile(text, argv[3], "exec")
            try:
                exec(code, ns)
            except AssertionError as e:
                print("check failed: %s" % (e or "assertion in %s" % argv[3]))
                return 1
            return 0
        if len(argv) == 3 and argv[1] == "dump":
            for r in load(argv[2]):
                print(brief(r))
            return 0
    except LogError as e:
        print("logq: %s" % e, file=sys.stderr)
        return 2
    except Exception as e:  # a missing key, a bad expression
        print("logq: %s: %s: %s" % (argv[-1], type(e).__name__, e),
              file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
