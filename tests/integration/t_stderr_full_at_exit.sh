# path = stderr, and stderr is a pipe already full that nobody reads (a
# daemon's stderr whose reader stalled) when the host exits before its
# ticker ever wrote: the exiting thread writes the exit record itself, and
# that write must give up (2 s) rather than hold the exit for good.  A
# helper's run (2026-12-05): the host hung in exit() every time, its own
# buffered stdout lost with it.  Also through _exit, and from a host whose
# fd 2 is a full socket (sendto with MSG_DONTWAIT there).  The host's exit
# status and stdout must be its own.
. "$(dirname "$0")/lib.sh"

cat >"$T/host.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
a.send(b"x" * 1000)
n = len(b.recv(4096))
print("received", n, flush=(sys.argv[1] == "_exit"))
if sys.argv[1] == "_exit":
    os._exit(5)
sys.exit(3)
PYEOF
cat >"$T/run.py" <<PYEOF
import fcntl, os, socket, subprocess, sys, time
how, kind = sys.argv[1], sys.argv[2]
if kind == "pipe":
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
else:
    w, r = [s.detach() for s in socket.socketpair()]
    for s in (w, r):
        socket.socket(fileno=os.dup(s)).setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
os.set_blocking(w, False)
try:
    while True:
        os.write(w, b"z" * 512)  # full, and nobody reads
except BlockingIOError:
    pass
os.set_blocking(w, True)
env = dict(os.environ, LD_PRELOAD="$LIB", SOCKMETER_LOG="stderr",
           SOCKMETER_FORMAT="json")
t = time.time()
try:
    p = subprocess.run(["$PY", "$T/host.py", how], stderr=w,
                       stdout=subprocess.PIPE, env=env, timeout=20)
except subprocess.TimeoutExpired:
    print("HANG")
    sys.exit(0)
sys.stdout.write(p.stdout.decode())
print("status", p.returncode)
print("took %.1f" % (time.time() - t))
PYEOF
for how in exit _exit; do
	for kind in pipe socket; do
		"$PY" "$T/run.py" "$how" "$kind" >"$T/out.$how.$kind" 2>&1 ||
			fail "$how $kind: runner: $(cat "$T/out.$how.$kind")"
		out=$(cat "$T/out.$how.$kind")
		grep -q HANG "$T/out.$how.$kind" &&
			fail "$how $kind: the host hung in its exit (stderr full): $out"
		want=3
		[ "$how" = _exit ] && want=5
		grep -q "^status $want\$" "$T/out.$how.$kind" ||
			fail "$how $kind: exit status: $out"
		grep -q '^received 1000$' "$T/out.$how.$kind" ||
			fail "$how $kind: the host's own output: $out"
		took=$(sed -n 's/^took //p' "$T/out.$how.$kind")
		awk -v t="$took" 'BEGIN { exit !(t < 8) }' ||
			fail "$how $kind: took ${took}s"
		echo "$how $kind: $(tr '\n' ' ' <"$T/out.$how.$kind")"
	done
done
exit 0
