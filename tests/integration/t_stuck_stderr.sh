# path = stderr, and stderr is a pipe nobody reads: the ticker's write
# blocks for good once the pipe is full.  The host must still fork and
# exit on time (the tick lock is only waited for a bounded time), with its
# own exit status, and its traffic unchanged.
. "$(dirname "$0")/lib.sh"

cat >"$T/host.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
end = time.time() + 1.5
n = 0
while time.time() < end:
    a.send(b"x" * 1000); n += len(b.recv(4096))
pid = os.fork()
if pid == 0:
    a.send(b"y"); os._exit(0)
os.waitpid(pid, 0)
n += len(b.recv(10))
print("received", n, flush=True)
sys.exit(3)
PYEOF
# A 4 KiB pipe on fd 2 that is never read.
cat >"$T/run.py" <<PYEOF
import fcntl, os, subprocess, sys
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
env = dict(os.environ, LD_PRELOAD="$LIB", SOCKMETER_LOG="stderr",
           SOCKMETER_FORMAT="json", SOCKMETER_INTERVAL="0.1", SOCKMETER_TOP="0")
p = subprocess.run(["$PY", "$T/host.py"], stderr=w, stdout=subprocess.PIPE,
                   env=env, timeout=30)
sys.stdout.write(p.stdout.decode())
print("status", p.returncode)
# The pipe must hold the library's records, half of it at least: with
# 15 interval records (more than the 4 KiB pipe holds) and nobody
# reading, its write then blocks (a write of up to 4 KiB waits for room
# for all of it, so the pipe may stay short of full).
os.set_blocking(r, False)
try:
    d = os.read(r, 65536)
except BlockingIOError:
    d = b""
print("stuck", int(len(d) >= 2048 and b'"type"' in d), len(d))
PYEOF
start=$(date +%s)
"$PY" "$T/run.py" >"$T/out" 2>&1 || fail "runner: $(cat "$T/out")"
took=$(( $(date +%s) - start ))
grep -q '^status 3$' "$T/out" || fail "exit status: $(cat "$T/out")"
grep -qE '^received [0-9]+$' "$T/out" || fail "output: $(cat "$T/out")"
grep -q '^stuck 1 ' "$T/out" || fail "the log pipe was not full of records: $(cat "$T/out")"
[ "$took" -le 12 ] || fail "took ${took}s: fork or exit waited on the stuck ticker"
exit 0
