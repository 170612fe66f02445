# A vfork child writes to a socket its parent holds but never used (its
# parent inherited it by fork, or across an exec): the parent's first look
# at the fd is the child's call (tests/progs/vforkfirst).  The child's 5
# bytes are counted into the parent's record of that socket, as a vfork
# child's calls on a socket the parent had used already always were: the
# logs of every process together hold exactly the bytes an unmetered sink
# received on that connection (before: 5 short, in no record).  When the
# child first dup2()s another socket onto that number, its bytes go to
# that one: the parent's record of its own socket gets none of them
# (kcmp tells the two apart).
. "$(dirname "$0")/lib.sh"

need_prog vforkfirst
cat >"$T/sink.py" <<'PY'
import socket, sys, threading
n, out = int(sys.argv[1]), sys.argv[2]
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(8)
open(out + ".port", "w").write("%d\n" % ls.getsockname()[1])
got = []
def drain(c, slot):
    k = 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        k += len(b)
    got[slot][1] = k
threads = []
for i in range(n):
    c, peer = ls.accept()
    got.append([peer[1], None])
    t = threading.Thread(target=drain, args=(c, i))
    t.start()
    threads.append(t)
for t in threads:
    t.join()
open(out, "w").write("".join("%d %d\n" % (p, k) for p, k in got))
PY
for via in fork exec; do
	for how in same replaced; do
		d=$T/$via-$how
		mkdir -p "$d/log"
		n=1
		[ "$how" = replaced ] && n=2
		# The sink is not metered: it is the truth.
		bg_start "$PY" "$T/sink.py" "$n" "$d/sink"
		sink=$BG_PID
		wait_for 10 test -s "$d/sink.port" || fail "$via $how: the sink did not start"
		SOCKMETER_LOG=$d/log/%n.%p.log SOCKMETER_FORMAT=json \
			sm "$PROGS/vforkfirst" "$(cat "$d/sink.port")" "$via" "$how" \
			>"$d/out" 2>"$d/err" ||
			fail "$via $how: vforkfirst failed: $(cat "$d/out" "$d/err")"
		bg_wait "$sink" 20 || fail "$via $how: the sink failed"
		read -r port bytes < <(head -n 1 "$d/sink")
		want=$(sed -n 's/.*sent_first=\([0-9]*\).*/\1/p' "$d/out")
		expect_eq "$via $how: what the sink got on the first connection" "$bytes" "$want"
		# Every process's final word on that connection: close, exec
		# and exit records (an interval record is a look on the way).
		expect_eq "$via $how: bytes_out of 127.0.0.1:$port in all the logs" \
			"$(q "$d/log/*.log" "sum(f['bytes_out'] for r in R if r['type'] in ('close', 'exec', 'exit') for f in r['fds'] if f['kind'] == 'tcp' and f.get('local') == '127.0.0.1:$port')")" \
			"$bytes"
		# B (the process that vforked) has that connection in its log.
		pid_b=$(sed -n 's/.*pid_b=\([0-9]*\).*/\1/p' "$d/out")
		expect_eq "$via $how: B's records of it" \
			"$(q "$d/log/vforkfirst.$pid_b.log" "len([f for r in R if r['type'] == 'exit' for f in r['fds'] if f.get('local') == '127.0.0.1:$port'])")" 1
	done
done
exit 0
