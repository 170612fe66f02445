# Warnings reach someone: once fd 2 is no longer the stderr the program
# started with (a daemon pointing it at its own error log) or when it was
# /dev/null, a warning goes to syslog instead: one datagram to the socket
# of [log] syslog (here a listener of the test's own, via
# SOCKMETER_SYSLOG), "<12>sockmeter[PID]: ..." (facility user, severity
# warning, ident sockmeter), and nothing goes into the program's new fd 2.
# While fd 2 is the original stderr, warnings stay there, unless the write
# fails (/dev/full).
. "$(dirname "$0")/lib.sh"

sock=$T/log.sock
syslog_listen "$sock" "$T/syslog.txt"

# wait_said PID - until the listener has a line of PID's (10 s at most).
wait_said() {
	wait_for 10 grep -q "sockmeter\[$1\]" "$T/syslog.txt" || true
}

# A program that moves fd 2 to a file of its own after start, then meters
# a connection; its log cannot be written (a missing directory).
cat >"$T/daemon.py" <<'PYEOF'
import os, socket, sys
f = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.dup2(f, 2)
a, b = socket.socketpair()
a.send(b"x" * 10)
b.recv(10)
print(os.getpid())
PYEOF
SOCKMETER_SYSLOG=$sock SOCKMETER_LOG=$T/missing/x.log \
	sm "$PY" "$T/daemon.py" "$T/own-error.log" >"$T/d.out" 2>"$T/d.err" ||
	fail "daemon.py failed: $(cat "$T/d.err")"
pid=$(head -n 1 "$T/d.out")
wait_said "$pid"
grep -q "^<12>sockmeter\[$pid\]: log $T/missing/x.log: cannot write: No such file or directory" \
	"$T/syslog.txt" || fail "no syslog warning from $pid: $(cat "$T/syslog.txt" 2>&1)"
[ ! -s "$T/own-error.log" ] || fail "warning in the program's own fd 2: $(cat "$T/own-error.log")"
[ ! -s "$T/d.err" ] || fail "warning on the old stderr: $(cat "$T/d.err")"

# fd 2 is /dev/null from the start: syslog too.
SOCKMETER_SYSLOG=$sock SOCKMETER_LOG=$T/missing/y.log \
	sm "$PY" -c 'import os, socket; a, b = socket.socketpair(); a.send(b"y"); b.recv(1); print(os.getpid())' \
	>"$T/n.out" 2>/dev/null || fail "python failed"
pid=$(head -n 1 "$T/n.out")
wait_said "$pid"
grep -q "^<12>sockmeter\[$pid\]: log $T/missing/y.log: cannot write" "$T/syslog.txt" ||
	fail "no syslog warning with fd 2 on /dev/null: $(cat "$T/syslog.txt" 2>&1)"

# fd 2 is /dev/full: the write of the warning fails (ENOSPC), so syslog
# gets it (before, it was said nowhere; a pipe whose reader is gone, EPIPE,
# the same).
SOCKMETER_SYSLOG=$sock SOCKMETER_LOG=$T/missing/f.log \
	sm "$PY" -c 'import os, socket; a, b = socket.socketpair(); a.send(b"f"); b.recv(1); print(os.getpid())' \
	>"$T/f.out" 2>/dev/full || fail "python failed with fd 2 on /dev/full"
pid=$(head -n 1 "$T/f.out")
wait_said "$pid"
grep -q "^<12>sockmeter\[$pid\]: log $T/missing/f.log: cannot write" "$T/syslog.txt" ||
	fail "no syslog warning with fd 2 on /dev/full: $(cat "$T/syslog.txt" 2>&1)"

# The original stderr still in place: the warning is there, not in syslog.
SOCKMETER_SYSLOG=$sock SOCKMETER_LOG=$T/missing/z.log \
	sm "$PY" -c 'import os, socket; a, b = socket.socketpair(); a.send(b"z"); b.recv(1); print(os.getpid())' \
	>"$T/s.out" 2>"$T/s.err" || fail "python failed"
pid=$(head -n 1 "$T/s.out")
grep -q "^sockmeter: log $T/missing/z.log: cannot write" "$T/s.err" ||
	fail "no warning on stderr: $(cat "$T/s.err")"
! grep -q "sockmeter\[$pid\]" "$T/syslog.txt" || fail "warning also in syslog"

# syslog = off: nowhere (and nothing breaks).
SOCKMETER_SYSLOG=off SOCKMETER_LOG=$T/missing/w.log \
	sm "$PY" -c 'import socket; a, b = socket.socketpair(); a.send(b"w"); b.recv(1)' \
	2>/dev/null || fail "python failed with syslog = off"
exit 0
