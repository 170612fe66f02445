# An open connection whose data call is in the kernel when the ticker
# reads it shows no unseen bytes in interval records: python3's
# http.server sends a 12 MB file with blocking 64 KiB sendall()s to a
# reader that takes 16 KiB every 3 ms, so a send is in the kernel, part of
# its bytes queued, at nearly every reading.  Before, 4 of the 6 interval
# records that listed the connection said 13 to 54 KB of bytes_out_unseen,
# bytes every later call saw; the close record said 0 all along.
# (A call the process never returns from is another matter: the exit
# record takes it as unseen, t_exit_call_in_flight.)
. "$(dirname "$0")/lib.sh"

# The in-flight note is x86-64's only (preload/preload.h): elsewhere a
# reading cannot tell a call in the kernel.
[ "$(uname -m)" = x86_64 ] || skip "the in-flight note is x86-64's"

size=12000000
mkdir -p "$T/www"
make_file "$T/www/f.bin" "$size"
port=$(free_port)
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG="$T/h.%p.log" \
	bg_start env LD_PRELOAD="$LIB" "$PY" -m http.server "$port" \
	--bind 127.0.0.1 --directory "$T/www"
spid=$BG_PID
wait_listen "$port" "$spid" 10 || fail "http.server did not start"
cat >"$T/get.py" <<'PYEOF'
import socket, sys, time
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
c.sendall(b"GET /f.bin HTTP/1.0\r\nHost: x\r\n\r\n")
n = 0
while True:
    d = c.recv(16384)
    if not d:
        break
    n += len(d)
    time.sleep(0.003)
print(n)
PYEOF
got=$(plain "$PY" "$T/get.py" "$port") || fail "the reader failed"
kill -INT "$spid"
wait "$spid"
log=$(one_log "$T/h.*.log")
cat >"$T/check.py" <<PYEOF
conn = [f for r in R if r["type"] == "interval" for f in r["fds"]
        if f["kind"] == "tcp" and f.get("peer")]
read = [f for f in conn if "tcp" in f]
assert len(read) >= 3, "the connection was read in %d interval records, not enough to tell" % len(read)
bad = [(f["bytes_out"], f.get("bytes_out_unseen")) for f in read if f.get("bytes_out_unseen")]
assert not bad, "interval records with unseen bytes (bytes_out, unseen): %s" % bad
# The connection's; the listener's own close record (http.server closes
# it as SIGINT ends it, in most runs) has no peer.
c = [f for f in closes(kind="tcp") if f.get("peer")]
assert len(c) == 1, "close records of the connection: %d" % len(c)
assert c[0]["bytes_out"] == $got, "bytes_out %d, the reader got $got" % c[0]["bytes_out"]
assert c[0]["bytes_out_unseen"] == 0, c[0]
PYEOF
check_py "$log" "$T/check.py" "a blocking send at the readings"
