# An inetd-style service (stdin and stdout are the TCP connection) that
# talks with printf, puts, putchar, fputs, fgets and scanf, run by
# `socat TCP-LISTEN:...,fork EXEC:...,nofork` for two connections: each
# service process's log has exactly the bytes its client sent and
# received, its last line (flushed by glibc at exit) included.  A third
# run has stdin and stdout line buffered, with a prompt that glibc flushes
# from inside fgets.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
need_prog stdio_service
cat >"$T/client.py" <<'PYEOF'
import socket, sys
port, lines = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
msg = b"".join(b"line %d %s\n" % (i, b"x" * (i % 50)) for i in range(lines))
msg += b"num\n1 2 3\n 4 5\nend of numbers\n"
s.sendall(msg)
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
assert got.startswith(b"hello from stdio_service\n"), got[:80]
assert b"sum=15\n" in got, got[-200:]
assert got.endswith(b"bye after %d lines\n" % (lines + 2)), got[-80:]
print("sent=%d\nreceived=%d" % (len(msg), len(got)))
PYEOF
svc="env LD_PRELOAD=$LIB SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/svc.%p.log $PROGS/stdio_service"
# listen ARGS - socat running the service with ARGS; sets port.
listen() {
	local try
	for try in 1 2 3 4 5; do
		port=$(free_port)
		bg_start socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" \
			"EXEC:$svc${1:+ $1},nofork" 2>"$T/socat.err"
		wait_listen "$port" "$BG_PID" 10 && return 0
		kill "$BG_PID" 2>/dev/null
	done
	fail "socat did not start: $(cat "$T/socat.err")"
}

# wait_logs N - until N service logs hold an exit record (20 s at most).
wait_logs() {
	local i=0
	until [ "$(cat "$T"/svc.*.log 2>/dev/null | grep -c '"type":"exit"')" -ge "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt 400 ] && fail "no exit record from service $1"
		sleep 0.05
	done
}
n=0
for run in 40 1500 linebuf; do
	n=$((n + 1))
	lines=$run
	if [ "$run" = linebuf ]; then
		listen linebuf
		lines=300
	elif [ "$n" = 1 ]; then
		listen ""
	fi
	timeout 30 "$PY" "$T/client.py" "$port" "$lines" >"$T/c$n.out" \
		2>"$T/c$n.err" || fail "client $n: $(cat "$T/c$n.err")"
	wait_logs $n
	log=$(ls -t "$T"/svc.*.log | head -n 1)
	expect_eq "service $n: [kind, bytes_in, bytes_out] of its connection fds" \
		"$(q "$log" "sorted([f['kind'], f['fd'], f['bytes_in'], f['bytes_out']] for f in conns())")" \
		"[[\"tcp\", 0, $(field sent "$T/c$n.out"), 0], [\"tcp\", 1, 0, $(field received "$T/c$n.out")]]"
	expect_eq "service $n: exit bytes_in" "$(q "$log" "tot('bytes_in')")" \
		"$(field sent "$T/c$n.out")"
	expect_eq "service $n: exit bytes_out" "$(q "$log" "tot('bytes_out')")" \
		"$(field received "$T/c$n.out")"
done
exit 0
