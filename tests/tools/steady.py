#!/usr/bin/python3
"""steady.py - short connections at a steady pace, plus one long one.

    steady.py SECONDS LONG_UNTIL

Every 25 ms for SECONDS seconds: a new unix socketpair moves 10,000 bytes
from one end to the other and both ends are closed (two close records),
and one socketpair opened at the start moves 2,000 bytes the same way,
until LONG_UNTIL seconds, when it is closed.  Prints one line per round,
"TIME BYTES": the Unix time at the end of the round and the bytes that
the wrapped calls moved in it, in + out (so 2 x 10,000, plus 2 x 2,000
while the long pair lives).  Run under the preload, it is a metered
process with a known rate and many close records.
"""
import socket
import sys
import time

SHORT, LONG, EVERY = 10000, 2000, 0.025


def move(a, b, n):
    a.sendall(b"s" * n)
    got = 0
    while got < n:
        got += len(b.recv(n - got))


def main():
    seconds, long_until = float(sys.argv[1]), float(sys.argv[2])
    t_start = time.monotonic()
    long_pair = socket.socketpair()
    out = []
    k = 0
    while True:
        now = time.monotonic() - t_start
        if now >= seconds:
            break
        a, b = socket.socketpair()
        move(a, b, SHORT)
        a.close()
        b.close()
        moved = 2 * SHORT
        if long_pair is not None:
            if now < long_until:
                move(long_pair[0], long_pair[1], LONG)
                moved += 2 * LONG
            else:
                long_pair[0].close()
                long_pair[1].close()
                long_pair = None
        out.append("%.6f %d\n" % (time.time(), moved))
        k += 1
        pause = t_start + k * EVERY - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    if long_pair is not None:
        long_pair[0].close()
        long_pair[1].close()
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
