#!/usr/bin/env python3
"""tools_top.py - what one redraw of sockmeter top costs on a big log.

    tools_top.py SOCKMETER_TOP LOG APPEND_FROM N

Loads sockmeter-top as a module, draws the first screen of LOG (poll +
frame), appends N lines of APPEND_FROM to LOG, draws again, and prints
one JSON object: first_s (first screen), redraw_s (the second), read_bytes
(what the second poll read), appended_bytes, and the process's peak RSS
in KiB (resource.getrusage).  The lines appended are removed again
(LOG is truncated back to its size).
"""
import importlib.machinery
import importlib.util
import json
import os
import resource
import sys
import time


def main():
    top_path, log, src, n = sys.argv[1], sys.argv[2], sys.argv[3], \
        int(sys.argv[4])
    loader = importlib.machinery.SourceFileLoader("smtop", top_path)
    spec = importlib.util.spec_from_loader("smtop", loader)
    top = importlib.util.module_from_spec(spec)
    loader.exec_module(top)
    size = os.path.getsize(log)
    t = top.Top(top.Sources([log], 60.0), 10.0)
    t0 = time.monotonic()
    t.poll()
    t.frame(200, 60)
    first = time.monotonic() - t0
    fol = t.src.files[log]
    with open(src, "rb") as fh:
        extra = b"".join(fh.readline() for _ in range(n))
    try:
        with open(log, "ab") as fh:
            fh.write(extra)
        before = fol.offset
        t0 = time.monotonic()
        t.poll()
        t.frame(200, 60)
        redraw = time.monotonic() - t0
        read = fol.offset - before
    finally:
        os.truncate(log, size)
    print(json.dumps(dict(first_s=first, redraw_s=redraw, read_bytes=read,
                          appended_bytes=len(extra), skipped=fol.skipped,
                          rss_kib=resource.getrusage(
                              resource.RUSAGE_SELF).ru_maxrss)))


if __name__ == "__main__":
    main()
