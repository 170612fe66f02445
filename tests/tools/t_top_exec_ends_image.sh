# sockmeter top and an exec: a metered python3 fetches a 50,000-byte file
# over a TCP connection (close-on-exec, as python's sockets are) and sends
# 70 bytes on an inheritable socketpair end, then execs curl, which
# fetches the file again.
# The old image's exec record ends it: top -b (which runs until every
# process it follows has ended) ends once curl has exited, shows the old
# image as "exec", its TCP connection closed by the exec and its
# inherited end "at exec".  Before, top -b followed the old image for
# ever (its state "last record N s ago", its connections "open").
. "$(dirname "$0")/lib.sh"
need curl
mkdir -p "$T/www" "$T/logs"
head -c 50000 /dev/urandom >"$T/www/f"
bg_start "$PY" "$HERE/serve.py" "$T/www" 2 "$T/port"
spid=$BG_PID
wait_for 10 test -s "$T/port" || fail "the HTTP server did not start"
port=$(cat "$T/port")
cat >"$T/img.py" <<'EOF'
import os, socket, sys
port = int(sys.argv[1])
c = socket.create_connection(("127.0.0.1", port))
c.sendall(b"GET /f HTTP/1.0\r\n\r\n")
got = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    got += len(b)
a, b = socket.socketpair()
a.set_inheritable(True)
a.send(b"x" * 70)
os.execvp("curl", ["curl", "-s", "-o", os.devnull,
                   "http://127.0.0.1:%d/f" % port])
EOF
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/p.log" sm "$PY" "$T/img.py" "$port" ||
	fail "python3 and curl failed"
wait "$spid" || fail "the HTTP server failed"
timeout 20 "$TOPCMD" -b -d 0.2 --linger -1 "$T/logs/p.log" >"$T/top.out" 2>&1
rc=$?
[ "$rc" = 124 ] && fail "top -b did not end after every process had: $(tail -n 12 "$T/top.out")"
expect_eq "top -b status" "$rc" 0
# The last table.
awk '/^sockmeter top - / { n = 0 } { t[n++] = $0 } END { for (i = 0; i < n; i++) print t[i] }' \
	"$T/top.out" >"$T/last"
grep -Eq '^python3 +[0-9]+ .* exec$' "$T/last" || fail "the old image is not 'exec': $(cat "$T/last")"
grep -Eq '^curl +[0-9]+ .* exited$' "$T/last" || fail "curl is not 'exited': $(cat "$T/last")"
grep -Eq "^python3 +[0-9]+ +[0-9]+ tcp +127\.0\.0\.1:$port .* closed " "$T/last" ||
	fail "python's TCP connection is not closed: $(cat "$T/last")"
grep -Eq '^python3 +[0-9]+ +[0-9]+ unix .* +0 +70 .* at exec ' "$T/last" ||
	fail "python's inherited socket end is not 'at exec': $(cat "$T/last")"
grep -Eq '^python3 .* open ' "$T/last" && fail "an open connection of the old image: $(cat "$T/last")"

# Followed live: the old image's exec record does not end top -b while
# the process goes on in its new image (a helper's sweep: top ended at
# once, before the new image's records).  python3 execs python3, which
# waits 1.5 s, sends 70 bytes on the inherited end and exits.
bg_start timeout 30 "$TOPCMD" -b -d 0.2 --linger -1 "$T/logs/live.log" >"$T/live.out" 2>&1
tpid=$BG_PID
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/logs/live.log" sm "$PY" -c '
import os, socket, sys
a, b = socket.socketpair()
a.set_inheritable(True)
b.set_inheritable(True)
os.execv(sys.executable, [sys.executable, "-c", """
import os, time
time.sleep(1.5)
os.write(%d, b"y" * 70)
assert len(os.read(%d, 100)) == 70
""" % (a.fileno(), b.fileno())])' || fail "python3 (live) failed"
wait_for 10 eval '! kill -0 $tpid 2>/dev/null' || fail "top -b did not end after the new image"
awk '/^sockmeter top - / { n = 0 } { t[n++] = $0 } END { for (i = 0; i < n; i++) print t[i] }' \
	"$T/live.out" >"$T/live.last"
grep -Eq '^python3 +[0-9]+ .* 70 +70 +2 +exited$' "$T/live.last" ||
	fail "top -b ended before the new image did: $(cat "$T/live.last")"
true
