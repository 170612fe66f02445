# A log path that is a FIFO, read slowly (16 KiB every 5 ms), by one writer
# and by three at once: every record arrives whole, one a line, none torn
# or glued to another, and none is lost.  Before, a batch went in one write
# that took what the pipe had room for: the next batch began on the torn
# line (2 to 16 unreadable lines in 1,500 records, counted as written);
# with three writers, one's records were cut by another's.  Now the
# library writes whole lines of at most PIPE_BUF bytes at a time (a pipe
# takes such a write whole or not at all) and waits for room.
#
# python3 opens N TCP connections to a listener, sends 5 bytes on each,
# and closes them all; the reader keeps what it read.  Every line of it
# must be a JSON record (logq.py fails on any other), with one close
# record per connection of each writer and each writer's exit record,
# whose fds_closed and bytes_out are exact and which counts no record
# dropped.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkfifo "$T/log.fifo"

cat >"$T/listen.py" <<'PYEOF'
import select, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(4096)
print("port", s.getsockname()[1], flush=True)
held = []
while True:
    r, _, _ = select.select([s] + held, [], [], 30)
    if not r:
        break
    for c in r:
        if c is s:
            held.append(s.accept()[0])
        elif not c.recv(4096):
            held.remove(c); c.close()
PYEOF
cat >"$T/slowread.py" <<'PYEOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)  # a writer of its own: never EOF
os.set_blocking(fd, False)
quiet = 0
with open(sys.argv[2], "wb") as out:
    while quiet < 400:  # 2 s without a byte: done
        try:
            b = os.read(fd, 16384)
            out.write(b); out.flush(); quiet = 0
        except BlockingIOError:
            quiet += 1
        time.sleep(0.005)
PYEOF
cat >"$T/conns.py" <<'PYEOF'
import socket, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
for s in socks:
    s.sendall(b"hello")
for s in socks:
    s.close()
PYEOF
bg_start "$PY" "$T/listen.py" >"$T/listen.out"
wait_for 10 grep -q '^port' "$T/listen.out" || fail "the listener did not start"
port=$(awk '/^port/ { print $2 }' "$T/listen.out")

# run NAME WRITERS CONNS - WRITERS metered python3s at once, CONNS each.
run() {
	local name=$1 writers=$2 n=$3 i pids=() pid
	bg_start "$PY" "$T/slowread.py" "$T/log.fifo" "$T/$name.log"
	local reader=$BG_PID
	sleep 0.3
	for i in $(seq "$writers"); do
		(ulimit -n 4096 && SOCKMETER_LOG=$T/log.fifo \
			exec env LD_PRELOAD="$LIB" "$PY" "$T/conns.py" "$n" "$port") \
			2>"$T/$name.$i.err" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || fail "$name: a writer failed: $(cat "$T/$name".*.err)"
	done
	bg_wait "$reader" 60
	for i in $(seq "$writers"); do
		[ -s "$T/$name.$i.err" ] && fail "$name: writer $i said: $(cat "$T/$name.$i.err")"
	done
	check "$T/$name.log" "len([r for r in R if r['type'] == 'exit']) == $writers" \
		"$name: one exit record per writer"
	for pid in $(q "$T/$name.log" "' '.join(str(r['pid']) for r in R if r['type'] == 'exit')"); do
		check "$T/$name.log" "len([r for r in R if r['type'] == 'close' and r['pid'] == $pid and r['fds'][0]['kind'] == 'tcp']) == $n" \
			"$name: pid $pid: $n close records"
		check "$T/$name.log" "[(r['totals']['fds_closed'] >= $n, r['totals']['bytes_out'], r['totals'].get('close_records_dropped', 0)) for r in R if r['type'] == 'exit' and r['pid'] == $pid] == [(True, 5 * $n, 0)]" \
			"$name: pid $pid: the exit record's totals"
	done
	echo "ok: $name: $writers writer(s) x $n connections, $(wc -l <"$T/$name.log") lines, every one a record"
}

run one 1 1500
run three 3 500
