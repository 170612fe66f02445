# Another preload that fakes the clock (libfaketime, a year back) changes
# nothing for the meter: the ticker's deadlines are on the kernel's clock,
# so interval records still come every second, and every record's times
# are the kernel's (ts after start, both now), in a fork child too.
# Before, the ticker slept for good: no interval record, window buckets
# never rotated, and children's records went a year back.
. "$(dirname "$0")/lib.sh"

need socat
ft=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1)
[ -n "$ft" ] || fail "libfaketime is not installed (scripts/install-deps)"
for try in 1 2 3 4 5; do
	port=$(free_port)
	bg_start sh -c "{ head -c 100000 /dev/zero; sleep 2.5; head -c 100000 /dev/zero; } |
		exec socat -u STDIN TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr"
	wait_listen "$port" "$BG_PID" 10 && break
done
t0=$(date +%s)
LD_PRELOAD="$LIB $ft" FAKETIME=-1y SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=1 \
	SOCKMETER_LOG=$T/s.log timeout 30 socat -u "TCP:127.0.0.1:$port" STDOUT \
	>"$T/got" 2>"$T/s.err" || fail "socat failed: $(cat "$T/s.err")"
expect_eq "bytes socat received" "$(stat -c %s "$T/got")" 200000
expect_eq "bytes in the exit record" "$(q "$T/s.log" "tot('bytes_in')")" 200000
check "$T/s.log" "len(IV) >= 2 and all(0.5 < r['ts'] - r['start'] < 10 for r in IV)" \
	"interval records every second (the ticker's clock)"
check "$T/s.log" "2 < E['ts'] - E['start'] < 15 and abs(E['ts'] - $t0) < 60" \
	"the exit record's times are the kernel's"

# A fork child that sends and ends with _exit: its records too.
LD_PRELOAD="$LIB $ft" FAKETIME=-1y SOCKMETER_FORMAT=json \
	SOCKMETER_LOG=$T/f-%p.log timeout 30 "$PY" -c '
import os, socket
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    a.send(b"x" * 1000)
    os._exit(0)
os.waitpid(pid, 0)
print(len(b.recv(4096)))
' >"$T/f.out" 2>&1 || fail "python failed: $(cat "$T/f.out")"
expect_eq "bytes the parent received" "$(cat "$T/f.out")" 1000
logs=$(ls "$T"/f-*.log | wc -l)
expect_eq "logs (parent and child)" "$logs" 2
for l in "$T"/f-*.log; do
	check "$l" "all(0 <= r['ts'] - r['start'] < 30 and abs(r['ts'] - $t0) < 120 for r in R)" \
		"$(basename "$l"): record times"
done
exit 0
