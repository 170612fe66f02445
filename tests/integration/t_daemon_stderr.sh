# A daemon that closed stderr may get fd 2 back for a connection: the
# library must never write its own messages into that connection.  Here
# the log directory is missing (so the library has a warning to give) and
# a socketpair end sits on fd 2: the peer must read exactly what the
# program sent.
#
# Regression: warnings are given only while fd 2 is the file it was at
# start-up (dev/ino), so they never land in the program's connection.
. "$(dirname "$0")/lib.sh"

dir=/nonexistent/dir
[ -e /nonexistent ] && dir=$T/nonexistent/dir
cat >"$T/daemon.py" <<'PYEOF'
import os, socket, sys, time
os.close(2)                     # as a daemon does
a, b = socket.socketpair()
assert a.fileno() == 2, a.fileno()
a.send(b"hello")
time.sleep(1.0)                 # interval records fail to be written
b.setblocking(False)
got = b""
try:
    while True:
        d = b.recv(65536)
        if not d:
            break
        got += d
except BlockingIOError:
    pass
print(repr(got))
PYEOF
SOCKMETER_LOG=$dir/x.log SOCKMETER_INTERVAL=0.1 \
	sm "$PY" "$T/daemon.py" >"$T/out" 2>"$T/err" ||
	fail "daemon.py failed: $(cat "$T/out")"
expect_eq "what the peer of fd 2 received" "$(cat "$T/out")" "b'hello'"
exit 0
