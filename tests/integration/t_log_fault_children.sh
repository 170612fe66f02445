# A pre-fork server whose log cannot be written: the parent says so once,
# and its workers, forked after that, whose logs are in the same directory
# (the same file, or one of their own by %p), meet the same fault: they
# say nothing (before: one line per worker, six for five workers).  A
# worker whose log works is not affected; one whose log is elsewhere (a
# template naming another directory) would still say its own.
#  - /dev/full (the same file) and /nonexistent/%p.log (a file per
#    process in a missing directory): exactly one "sockmeter:" line;
#  - the program's output and status as without the preload.
. "$(dirname "$0")/lib.sh"

pybin=/usr/bin/python3
[ -x "$pybin" ] || pybin=$PY
cat >"$T/pf.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
a.send(b"x"); b.recv(1)
time.sleep(0.5)  # the parent's interval records have failed by now
for i in range(5):
    pid = os.fork()
    if pid == 0:
        a.send(b"x" * 10); b.recv(10); time.sleep(0.3); os._exit(0)
    os.waitpid(pid, 0)
print("done")
sys.exit(7)
PYEOF
for path in /dev/full "/nonexistent-$$/%p.log"; do
	SOCKMETER_LOG=$path SOCKMETER_INTERVAL=0.1 sm "$pybin" "$T/pf.py" \
		>"$T/out" 2>"$T/err" && st=0 || st=$?
	expect_eq "$path: status" "$st" 7
	expect_eq "$path: output" "$(cat "$T/out")" done
	expect_eq "$path: lines on stderr" "$(wc -l <"$T/err")" 1
	expect_eq "$path: sockmeter lines" "$(sm_lines "$T/err")" 1
done
exit 0
