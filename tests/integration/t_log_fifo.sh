# A log path that is a FIFO, read slowly (32 KiB every 5 ms), by one writer
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
# dropped.  And 200 connections left open at the exit: an exit record
# longer than PIPE_BUF, in one line.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkfifo "$T/log.fifo"

# The listener holds up to 1,500 connections at once: epoll (select
# stops at fd 1024), and an fd limit raised to the hard one.
cat >"$T/listen.py" <<'PYEOF'
import resource, selectors, socket
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(4096)
print("port", s.getsockname()[1], flush=True)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
while True:
    ready = sel.select(30)
    if not ready:
        break
    for key, _ in ready:
        if key.fileobj is s:
            sel.register(s.accept()[0], selectors.EVENT_READ)
        elif not key.fileobj.recv(4096):
            sel.unregister(key.fileobj); key.fileobj.close()
PYEOF
cat >"$T/slowread.py" <<'PYEOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)  # a writer of its own: never EOF
os.set_blocking(fd, False)
quiet = 0
with open(sys.argv[2], "wb") as out:
    while quiet < 400:  # 2 s without a byte: done
        try:
            b = os.read(fd, 32768)
            out.write(b); out.flush(); quiet = 0
        except BlockingIOError:
            quiet += 1
        time.sleep(0.005)
PYEOF
cat >"$T/conns.py" <<'PYEOF'
import os, socket, sys
n, port = int(sys.argv[1]), int(sys.argv[2])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
for s in socks:
    s.sendall(b"hello")
if len(sys.argv) > 3:  # "open": left open, to the exit record
    os._exit(0)
for s in socks:
    s.close()
PYEOF
bg_start "$PY" "$T/listen.py" >"$T/listen.out"
wait_for 10 grep -q '^port' "$T/listen.out" || fail "the listener did not start"
port=$(awk '/^port/ { print $2 }' "$T/listen.out")

# run NAME WRITERS CONNS [open] - WRITERS metered python3s at once, CONNS
# connections each, closed (or left open, to the exit record).
run() {
	local name=$1 writers=$2 n=$3 open=${4:-} i pids=() pid
	bg_start "$PY" "$T/slowread.py" "$T/log.fifo" "$T/$name.log"
	local reader=$BG_PID
	sleep 0.3
	for i in $(seq "$writers"); do
		(ulimit -n 4096 && SOCKMETER_LOG=$T/log.fifo \
			exec env LD_PRELOAD="$LIB" "$PY" "$T/conns.py" "$n" "$port" $open) \
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
		if [ -n "$open" ]; then
			check "$T/$name.log" "[(r['totals']['fds_open'], r['totals']['bytes_out'], len(json.dumps(r)) > 4096) for r in R if r['type'] == 'exit' and r['pid'] == $pid] == [($n, 5 * $n, True)]" \
				"$name: pid $pid: one exit record, longer than PIPE_BUF, with $n connections open"
			continue
		fi
		check "$T/$name.log" "len([r for r in R if r['type'] == 'close' and r['pid'] == $pid and r['fds'][0]['kind'] == 'tcp']) == $n" \
			"$name: pid $pid: $n close records"
		check "$T/$name.log" "[(r['totals']['fds_closed'] >= $n, r['totals']['bytes_out'], r['totals'].get('close_records_dropped', 0)) for r in R if r['type'] == 'exit' and r['pid'] == $pid] == [(True, 5 * $n, 0)]" \
			"$name: pid $pid: the exit record's totals"
	done
	echo "ok: $name: $writers writer(s) x $n connections, $(wc -l <"$T/$name.log") lines, every one a record"
}

run one 1 1500
run three 3 500
# An exit record longer than PIPE_BUF goes in pieces: one line all the
# same (a first version ended each piece with a newline of its own).
run long 1 200 open

# A reader that never reads, the FIFO already full: the ticker's wait for
# room is bounded (1 s a batch), for it has other work.  A process whose
# main thread called pthread_exit and whose last worker ends with a raw
# exit system call is ended by the ticker: a first version waited for the
# reader for good, and such a process lived as long as the reader did.
need_prog lastthread
cat >"$T/stuck.py" <<'PYEOF'
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
os.set_blocking(fd, False)
try:
    while True:
        os.write(fd, b"x" * 4096)
except BlockingIOError:
    pass
print("full", flush=True)
time.sleep(60)
PYEOF
bg_start "$PY" "$T/stuck.py" "$T/log.fifo" >"$T/stuck.out"
wait_for 10 grep -q '^full' "$T/stuck.out" || fail "the FIFO was not filled"
timeout 10 "$PROGS/lastthread" workerraw 300 10 9 >/dev/null
plain=$?
t0=$(sm_now_ms)
SOCKMETER_LOG=$T/log.fifo timeout -k 2 30 env LD_PRELOAD="$LIB" \
	"$PROGS/lastthread" workerraw 300 3000 9 >"$T/last.out" 2>"$T/last.err"
st=$?
ms=$(($(sm_now_ms) - t0))
expect_eq "stuck reader: status as without the preload" "$st" "$plain"
[ "$ms" -lt 10000 ] || fail "stuck reader: the process ended after $ms ms"
echo "ok: stuck reader: ended with $st after $ms ms: $(head -c 300 "$T/last.err")"
