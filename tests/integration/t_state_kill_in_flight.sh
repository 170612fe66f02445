# A process killed while a data call of its is in the kernel: that call's
# bytes may have moved, and no count has them (its return never came).
# The recovered exit record says which connection that was:
# "call_in_flight": true on its fd (text: call_in_flight=yes), and on no
# other.  A python3 sender blocks in one send() of 8 MB to an unmetered
# peer that does not read yet, beside an idle connection; SIGKILL; the
# peer then reads everything: more than the record counts (the cut-off
# call's bytes), and only that connection is marked.  Killed while idle:
# no mark anywhere.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state
mkdir -p "$T/logs"
case $(uname -m) in
x86_64) ;;
*) skip "calls note themselves in flight on x86-64 only" ;;
esac

cat >"$T/peer.py" <<'PY'
import socket, sys, time
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(4)
open(sys.argv[1] + ".port", "w").write("%d\n" % ls.getsockname()[1])
conns = [ls.accept()[0] for _ in range(2)]
while not __import__("os").path.exists(sys.argv[1] + ".go"):
    time.sleep(0.02)
got = []
for c in conns:
    n = 0
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        n += len(b)
    got.append(n)
open(sys.argv[1], "w").write(" ".join(map(str, got)) + "\n")
PY
cat >"$T/victim.py" <<'PY'
import os, socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
busy = socket.create_connection(("127.0.0.1", port))
idle = socket.create_connection(("127.0.0.1", port))
busy.sendall(b"a" * 1000)
idle.sendall(b"b" * 10)
print("ready", os.getpid(), busy.getsockname()[1], idle.getsockname()[1], flush=True)
if mode == "send":
    busy.send(b"x" * (8 << 20))   # one call, blocked: nobody reads
time.sleep(60)
PY

for mode in send idle; do
	d=$T/$mode
	mkdir -p "$d"
	bg_start "$PY" "$T/peer.py" "$d/peer"
	peer=$BG_PID
	wait_for 10 test -s "$d/peer.port" || fail "$mode: the peer did not start"
	SOCKMETER_LOG=$T/logs/$mode.%p.log SOCKMETER_FORMAT=json \
		bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" "$(cat "$d/peer.port")" "$mode" >"$d/out"
	victim=$BG_PID
	wait_for 10 grep -q '^ready' "$d/out" || fail "$mode: the victim did not start"
	read -r _ vpid busy idle <"$d/out"
	if [ "$mode" = send ]; then
		# Blocked in the send: its thread sleeps in the kernel, and
		# the socket's send queue holds what the call moved so far.
		wait_for 10 eval "grep -q '^State:.*S (sleeping)' /proc/$vpid/status && \
			[ \"\$(awk '\$2 ~ /:$(printf %04X "$busy")\$/ { print \$5 }' /proc/net/tcp | cut -d: -f1)\" != 00000000 ]" ||
			fail "send: the victim did not block in its send"
		sleep 0.3
	else
		sleep 0.3
	fi
	kill -KILL "$vpid"
	wait "$victim" 2>/dev/null
	touch "$d/peer.go"
	bg_wait "$peer" 20 || fail "$mode: the peer failed"
	read -r got_busy got_idle <"$d/peer"
	"$SM_TOP/scripts/sockmeter" recover -q "$T/state" 2>"$d/rec.err" ||
		fail "$mode: recover: $(cat "$d/rec.err")"
	log=$(one_log "$T/logs/$mode.$vpid.log")
	expect_eq "$mode: end" "$(q "$log" "E['end']")" killed
	expect_eq "$mode: idle connection [bytes_out, marked]" \
		"$(q "$log" "[[f['bytes_out'], f.get('call_in_flight', False)] for f in E['fds'] if f['local'] == '127.0.0.1:$idle']")" \
		"[[$got_idle, false]]"
	logged=$(q "$log" "[f['bytes_out'] for f in E['fds'] if f['local'] == '127.0.0.1:$busy'][0]")
	marked=$(q "$log" "[f.get('call_in_flight', False) for f in E['fds'] if f['local'] == '127.0.0.1:$busy'][0]")
	if [ "$mode" = send ]; then
		expect_eq "send: the busy connection marked" "$marked" true
		[ "$logged" = 1000 ] && [ "$got_busy" -gt 1000 ] ||
			fail "send: logged $logged, the peer got $got_busy: the cut-off call's bytes should be the difference"
		echo "send: the peer got $got_busy, the record counts $logged; marked call_in_flight" >&2
	else
		expect_eq "idle: the busy connection marked" "$marked" false
		expect_eq "idle: its bytes" "$logged" "$got_busy"
	fi
done
# The same mark in text.
mkdir -p "$T/text"
bg_start "$PY" "$T/peer.py" "$T/text/peer"
peer=$BG_PID
wait_for 10 test -s "$T/text/peer.port" || fail "text: the peer did not start"
SOCKMETER_LOG=$T/logs/text.%p.log \
	bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" "$(cat "$T/text/peer.port")" send >"$T/text/out"
victim=$BG_PID
wait_for 10 grep -q '^ready' "$T/text/out" || fail "text: the victim did not start"
read -r _ vpid busy idle <"$T/text/out"
sleep 0.5
kill -KILL "$vpid"
wait "$victim" 2>/dev/null
touch "$T/text/peer.go"
bg_wait "$peer" 20 || fail "text: the peer failed"
"$SM_TOP/scripts/sockmeter" recover -q "$T/state" 2>"$T/text/rec.err" ||
	fail "text: recover: $(cat "$T/text/rec.err")"
row=$(grep " 127.0.0.1:$busy " "$(one_log "$T/logs/text.$vpid.log")") || fail "text: no row of the busy connection"
[[ $row == *call_in_flight=yes* ]] || fail "text: not marked: $row"
row=$(grep " 127.0.0.1:$idle " "$T/logs/text.$vpid.log") || fail "text: no row of the idle connection"
[[ $row == *call_in_flight* ]] && fail "text: the idle connection marked: $row"
exit 0
