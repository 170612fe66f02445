#!/usr/bin/python3
"""pace.py - send a known number of bytes over TCP at a steady rate.

    pace.py HOST PORT BYTES RATE [CHUNK]

Connects to HOST:PORT (retrying for up to 5 s while nothing listens yet),
writes BYTES bytes in CHUNK-byte writes (default 10000) paced to RATE
bytes per second, shuts its side down, reads until the peer closes and
prints "sent=N local=HOST:PORT seconds=S".  Run under the preload, it is a
metered program whose bytes, rate and peer are known.
"""
import socket
import sys
import time


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    total, rate = int(sys.argv[3]), float(sys.argv[4])
    chunk = int(sys.argv[5]) if len(sys.argv) > 5 else 10000
    deadline = time.monotonic() + 5
    while True:
        try:
            s = socket.create_connection((host, port))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    buf = b"p" * chunk
    sent, t0 = 0, time.monotonic()
    while sent < total:
        n = min(chunk, total - sent)
        s.sendall(buf[:n])
        sent += n
        wait = t0 + sent / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    local = "%s:%d" % s.getsockname()[:2]
    s.close()
    print("sent=%d local=%s seconds=%.3f"
          % (sent, local, time.monotonic() - t0))


if __name__ == "__main__":
    main()
