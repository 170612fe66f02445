# An fd the program did not open (inherited across exec from a parent
# that is not metered) is classified on its first data call: kind "unix",
# "opened" null, and its bytes exact.
. "$(dirname "$0")/lib.sh"

cat >"$T/parent.py" <<'PYEOF'
import os, socket, subprocess, sys
a, b = socket.socketpair()
child = sys.argv[1:]
code = ("import os\n"
        "n = 0\n"
        "for i in range(10):\n"
        "    n += os.write(%d, b'q' * (1000 + i))\n"
        "os.close(%d)\n"
        "print(n)\n") % (a.fileno(), a.fileno())
out = subprocess.run(child + ["-c", code], pass_fds=[a.fileno()],
                     stdout=subprocess.PIPE, check=True).stdout
fd = a.fileno()
a.close()
got = 0
while True:
    d = b.recv(65536)
    if not d:
        break
    got += len(d)
print("fd=%d\nsent=%s\ngot=%d" % (fd, out.decode().strip(), got))
PYEOF
# Only the child is preloaded: the parent runs plain and hands it the fd.
plain "$PY" "$T/parent.py" env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/c.%p.log" \
	SOCKMETER_FORMAT=json "$PY" >"$T/out" 2>"$T/err" ||
	fail "parent.py failed: $(cat "$T/err")"
fd=$(field fd "$T/out")
sent=$(field sent "$T/out")
expect_eq "bytes the parent got" "$(field got "$T/out")" "$sent"
expect_eq "bytes sent" "$sent" 10045
log=$(one_log "$T/c.*.log")
expect_eq "child: records of the inherited fd $fd [kind, opened, bytes_out, calls_out]" \
	"$(q "$log" "[[f['kind'], f['opened'], f['bytes_out'], f['calls_out']] for f in conns(fd=$fd)]")" \
	"[[\"unix\", null, $sent, 10]]"
expect_eq "child: exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$sent"
exit 0
