#!/usr/bin/env python3
"""tools_workload.py - the real run that the tools benchmark replicates.

    tools_workload.py SECONDS CONNECTIONS

A busy little server: a TCP echo-ish server on 127.0.0.1 (threads) and a
client in the same process that opens CONNECTIONS short connections spread
over SECONDS (each sends 1 to 20 KB and reads a reply of the same size)
while two long connections stream 64 KB every 50 ms the whole time.  Run
under the preload with format = json, its log holds real close, interval
and exit records with TCP peers, rates and size histograms: the templates
that tests/bench/tools_gen.py copies into logs of any length.
"""
import random
import socket
import sys
import threading
import time


def serve(lsock):
    while True:
        try:
            c, _ = lsock.accept()
        except OSError:
            return
        threading.Thread(target=echo, args=(c,), daemon=True).start()


def echo(c):
    with c:
        while True:
            d = c.recv(65536)
            if not d:
                return
            c.sendall(d)


def stream(port, stop):
    s = socket.create_connection(("127.0.0.1", port))
    chunk = b"x" * 65536
    while not stop.is_set():
        s.sendall(chunk)
        got = 0
        while got < len(chunk):
            got += len(s.recv(65536))
        time.sleep(0.05)
    s.close()


def main():
    seconds, n = float(sys.argv[1]), int(sys.argv[2])
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(128)
    port = lsock.getsockname()[1]
    threading.Thread(target=serve, args=(lsock,), daemon=True).start()
    stop = threading.Event()
    longs = [threading.Thread(target=stream, args=(port, stop))
             for _ in range(2)]
    for t in longs:
        t.start()
    rnd = random.Random(13)
    t0 = time.monotonic()
    for i in range(n):
        due = t0 + seconds * i / n
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        size = rnd.randint(1000, 20000)
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(b"y" * size)
            got = 0
            while got < size:
                got += len(s.recv(65536))
    stop.set()
    for t in longs:
        t.join()
    lsock.close()


if __name__ == "__main__":
    main()
