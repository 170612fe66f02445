# An inetd-style service (socat's EXEC with nofork and stderr: the
# service's fds 0, 1 and 2 are the client's TCP connection, as under
# inetd, xinetd, tcpserver or systemd's Accept=yes): the library's
# warnings, at start (a bad environment value) and later (a log that
# cannot be written), go to syslog, never into the client's connection;
# the client gets exactly the service's bytes.
. "$(dirname "$0")/lib.sh"
need socat

sock=$T/log.sock
syslog_listen "$sock" "$T/syslog.txt"

# The service reads all, answers, waits for the ticker to fail a write,
# answers again.
cat >"$T/svc.py" <<'PYEOF'
import os, sys, time
data = sys.stdin.buffer.read()
sys.stdout.write("pid:%d got:%d\n" % (os.getpid(), len(data)))
sys.stdout.flush()
time.sleep(0.6)
sys.stdout.write("bye\n")
PYEOF
port=$(free_port)
SOCKMETER_SYSLOG=$sock SOCKMETER_TOP=-1 SOCKMETER_INTERVAL=0.1 \
	SOCKMETER_LOG=$T/missing/%n.%p.log \
	bg_start env LD_PRELOAD="$LIB" socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" \
	"EXEC:$PY $T/svc.py,nofork,stderr" 2>"$T/socat.err"
wait_listen "$port" "$BG_PID" || fail "socat did not listen"
plain "$PY" - "$port" >"$T/client.out" <<'PYEOF' || fail "client failed"
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"x" * 1000)
c.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = c.recv(65536)
    if not b:
        break
    got += b
sys.stdout.write(got.decode("utf-8", "replace"))
PYEOF
pid=$(sed -n 's/^pid:\([0-9]*\) .*/\1/p' "$T/client.out")
[ -n "$pid" ] || fail "no answer from the service: $(cat "$T/client.out")"
expect_eq "what the client got" "$(cat "$T/client.out")" "pid:$pid got:1000
bye"
for i in $(seq 200); do
	grep -q "sockmeter\[$pid\]: log .*cannot write" "$T/syslog.txt" 2>/dev/null && break
	sleep 0.05
done
grep -q "^<12>sockmeter\[$pid\]: environment SOCKMETER_TOP" "$T/syslog.txt" ||
	fail "no start-up warning in syslog from $pid: $(cat "$T/syslog.txt")"
grep -q "^<12>sockmeter\[$pid\]: log $T/missing/python.*cannot write" "$T/syslog.txt" ||
	fail "no log warning in syslog from $pid: $(cat "$T/syslog.txt")"
exit 0
