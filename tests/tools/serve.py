#!/usr/bin/python3
"""serve.py - an HTTP server that serves a directory for a known number of
requests, then exits normally (so, metered, it writes an exit record).

    serve.py DIR COUNT PORTFILE

Binds 127.0.0.1 on a free port, writes the port to PORTFILE once it
listens, answers COUNT requests (http.server's handler, so the bytes are
the ones python3 -m http.server sends) and exits 0.
"""
import functools
import http.server
import os
import sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    root, count, portfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    handler = functools.partial(Quiet, directory=root)
    srv = http.server.HTTPServer(("127.0.0.1", 0), handler)
    srv.timeout = 20
    tmp = portfile + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    for _ in range(count):
        srv.handle_request()
    srv.server_close()


if __name__ == "__main__":
    main()
