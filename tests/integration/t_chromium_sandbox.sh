# Chromium with its sandbox, under the preload.  Its zygote checks that it
# is single-threaded before it sandboxes itself, and makes its chroot
# helper by clone(CLONE_VM | CLONE_VFORK | CLONE_SETTLS) on a zeroed TLS
# block of its own.  Before the fixes the browser aborted ("Failed to
# receive hello message from zygote"): the zygote's first message started
# the ticker, and the helper's wrapped calls faulted on the foreign TLS
# (with SOCKMETER=off too).  Now the zygote runs without a ticker
# (preload.c: must_stay_single_threaded) and the wrappers leave a foreign
# TLS alone (sm_tls_foreign).
#
# The page, a script and a style sheet come from a server that counts what it
# sends and receives on each connection (the truth); the Chromium
# processes' records of those connections (the network service's) must
# add up to exactly that.  Chromium refuses its sandbox to root, so as
# root it runs as nobody.
. "$(dirname "$0")/lib.sh"
need chromium
chmod 755 "$T"
mkdir -m 755 "$T/www" "$T/home"
mkdir -m 1777 "$T/logs"
# A script and a style sheet, fetched whole before the load event (random
# bytes as an image would be dropped at the first bytes that do not
# decode, the connection closed with the rest unread).
{ printf '/*'; head -c 1100000 /dev/urandom | base64 -w 0; printf '*/\n'; } >"$T/www/a.js"
{ printf '/*'; head -c 600000 /dev/urandom | base64 -w 0; printf '*/\n'; } >"$T/www/b.css"
cat >"$T/www/index.html" <<'HTML'
<html><head><link rel="stylesheet" href="b.css"><script src="a.js"></script>
</head><body><p id="m">sockmeter-page</p></body></html>
HTML
chmod -R a+rX "$T/www"
cat >"$T/server.py" <<'PYEOF'
# An HTTP server that counts the bytes of each connection (the truth).
import http.server, io, os, sys, threading
port, truth, root = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
class Counted(io.RawIOBase):
    def __init__(self, sock):
        self.sock, self.n_in, self.n_out = sock, 0, 0
    def readable(self):
        return True
    def writable(self):
        return True
    def readinto(self, b):
        try:
            k = self.sock.recv_into(b)
        except ConnectionResetError:
            k = 0
        self.n_in += k
        return k
    def write(self, b):
        self.sock.sendall(b)
        self.n_out += len(b)
        return len(b)
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        self.connection = self.request
        self.c = Counted(self.request)
        self.rfile = io.BufferedReader(self.c)
        self.wfile = self.c
    def finish(self):
        with lock, open(truth, "a") as f:
            f.write("%d %d\n" % (self.c.n_in, self.c.n_out))
    def log_message(self, *a):
        pass
os.chdir(root)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), H)
srv.daemon_threads = True
srv.serve_forever()
PYEOF
port=$(free_port)
bg_start "$PY" "$T/server.py" "$port" "$T/truth" "$T/www"
wait_listen "$port" "$BG_PID" 10 || fail "the server did not start"
as=()
if [ "$(id -u)" = 0 ]; then
	need runuser
	as=(runuser -u nobody --)
fi
# chromium ARGS... : headless, sandboxed, its output in $T/dom.
chromium_run() {
	timeout 90 "${as[@]}" env HOME="$T/home" "$@" chromium --headless \
		--disable-gpu --no-first-run --virtual-time-budget=3000 \
		--dump-dom "http://127.0.0.1:$port/index.html" >"$T/dom" 2>"$T/chromium.err"
}
chmod 1777 "$T/home"
chromium_run || skip "Chromium's sandbox does not run here, even without the preload: $(grep -m 1 FATAL "$T/chromium.err")"
grep -q sockmeter-page "$T/dom" || skip "Chromium without the preload did not load the page"
: >"$T/truth"
chromium_run LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/logs/%n.%p.log" SOCKMETER_FORMAT=json ||
	fail "sandboxed Chromium failed under the preload (status $?): $(grep -m 3 -E 'FATAL|Check failed|sockmeter' "$T/chromium.err")"
grep -q sockmeter-page "$T/dom" || fail "no page under the preload: $(head -c 300 "$T/dom")"
# The zygote and the renderers, chrooted into an empty directory with no
# ticker to hold their logs open, may say that their records cannot be
# written (README, Limits); nothing else may be said.
if grep '^sockmeter' "$T/chromium.err" | grep -v 'cannot write' >"$T/warn"; then
	fail "warnings: $(cat "$T/warn")"
fi
# The server writes a connection's truth when its handler ends: wait for
# Chromium's connections to be closed and counted.
sleep 1
"$PY" - "$T/truth" "$T/logs" "$port" >"$T/sums" <<'PYEOF' || fail "$(cat "$T/sums")"
import glob, json, os, sys
truth, logs, port = sys.argv[1], sys.argv[2], sys.argv[3]
t_in = t_out = 0
for line in open(truth):
    a, b = line.split()
    t_in, t_out = t_in + int(a), t_out + int(b)
got_in = got_out = conns = 0
for f in glob.glob(os.path.join(logs, "*")):
    recs = [json.loads(l) for l in open(f) if l.strip()]
    ends = [r for r in recs if r["type"] in ("exit", "exec")]
    fds = [fd for r in recs if r["type"] == "close" for fd in r["fds"]]
    if ends:
        fds += ends[-1]["fds"]
    for fd in fds:
        if fd.get("kind") == "tcp" and fd.get("peer", "").endswith(":" + port):
            conns += 1
            got_in += fd.get("bytes_in", 0)
            got_out += fd.get("bytes_out", 0)
print("server sent %d, received %d; Chromium's records: in %d, out %d, %d connections"
      % (t_out, t_in, got_in, got_out, conns))
if t_out < 2200000:
    sys.exit("the server sent only %d bytes: the script and style sheet were not fetched" % t_out)
if (got_in, got_out) != (t_out, t_in):
    sys.exit("mismatch: " + open(truth).read())
PYEOF
cat "$T/sums" >&2
exit 0
