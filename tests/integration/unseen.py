#!/usr/bin/env python3
"""unseen.py - the integration suite's common check that a preload saw every
byte: every TCP connection closed in every sockmeter log under DIR (JSON
Lines or text close records) must show bytes_in_unseen = bytes_out_unseen =
0, the kernel's count (tcp_info) agreeing with the wrapped calls' count.
Close records are where the count is exact: an open connection's reading
(interval and exit records) can include a blocking call still in progress,
part of whose bytes the kernel has already queued (docs/log.md).

Usage: unseen.py DIR     exit 0 when all agree; else print the first
                         offending record (file, fd, numbers) and exit 1.
A log line that is not a record (a test's own output) is ignored.
"""
import json
import os
import re
import stat
import sys

TEXT = re.compile(r"bytes_(in|out)_unseen=(\d+)")


def check_json(name, n, line):
    try:
        r = json.loads(line)
    except ValueError:
        return None
    if not isinstance(r, dict) or r.get("type") != "close":
        return None
    for f in r.get("fds") or []:
        if not isinstance(f, dict):
            continue
        i, o = f.get("bytes_in_unseen", 0), f.get("bytes_out_unseen", 0)
        if i or o:
            return "%s:%d: %s record, %s fd %s peer %s: bytes_in=%s " \
                "bytes_in_unseen=%s bytes_out=%s bytes_out_unseen=%s" % (
                    name, n, r["type"], f.get("kind"), f.get("fd"),
                    f.get("peer"), f.get("bytes_in"), i, f.get("bytes_out"),
                    o)
    return None


def check_text(name, n, line):
    if " sockmeter close " not in line:
        return None
    for d, v in TEXT.findall(line):
        if int(v):
            return "%s:%d: %s" % (name, n, line.strip())
    return None


def main():
    checked = 0
    for root, _dirs, files in os.walk(sys.argv[1]):
        for fname in sorted(files):
            path = os.path.join(root, fname)
            try:
                # Regular files only: a test's FIFO would block the open.
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    head = fh.read(4096)
                    if "sockmeter" not in head and '"totals"' not in head:
                        continue
                    fh.seek(0)
                    for n, line in enumerate(fh, 1):
                        if "_unseen" not in line:
                            continue
                        checked += 1
                        bad = (check_json if line.startswith("{")
                               else check_text)(path, n, line)
                        if bad:
                            print(bad)
                            return 1
            except OSError:
                continue
    return 0


if __name__ == "__main__":
    sys.exit(main())
