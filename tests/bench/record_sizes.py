#!/usr/bin/env python3
"""record_sizes.py LOG... - mean bytes per record, by type and format.

Prints one line per (format, type): "json close 511.7 605" (mean bytes per
record, with its newline, and the number of records).  A text record is
its header line and the lines after it up to the next header; a text close
record is one line.
"""
import collections
import json
import sys


def main():
    size = collections.defaultdict(list)
    for path in sys.argv[1:]:
        cur = None
        with open(path, "rb") as fh:
            for raw in fh:
                if raw.startswith(b"{"):
                    size[("json", json.loads(raw)["type"])].append(len(raw))
                    continue
                parts = raw.split(b" ", 3)
                if len(parts) > 2 and parts[1] == b"sockmeter":
                    cur = [0]
                    size[("text", parts[2].decode())].append(cur)
                if cur is not None:
                    cur[0] += len(raw)
    for (fmt, typ), v in sorted(size.items()):
        v = [x[0] if isinstance(x, list) else x for x in v]
        print("%s %s %.1f %d" % (fmt, typ, sum(v) / len(v), len(v)))


if __name__ == "__main__":
    main()
