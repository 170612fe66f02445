# One close_range over more connections than the close queue holds (8,192):
# every record reaches the log.  python's os.closerange is close_range;
# before, with ~19,800 socket fds open, about 6,000 records were dropped
# every time (close_records_dropped), now the closing thread waits for the
# ticker to make room, bounded (preload.c: range_room).
. "$(dirname "$0")/lib.sh"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
n=$(((hard - 200) / 2))
[ "$n" -gt 9900 ] && n=9900
[ "$n" -ge 6000 ] || skip "RLIMIT_NOFILE's hard limit ($hard) leaves too few fds for a burst"
cat >"$T/burst.py" <<'PYEOF'
import os, resource, socket, sys
h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (h, h))
n = int(sys.argv[1])
pairs = [socket.socketpair() for _ in range(n)]
for a, b in pairs:
    a.send(b"x")
    b.recv(1)
fds = [s.detach() for p in pairs for s in p]
os.closerange(min(fds), max(fds) + 1)
print(len(fds))
PYEOF
for fmt in text json; do
	SOCKMETER_LOG=$T/$fmt.%p.log SOCKMETER_FORMAT=$fmt sm "$PY" "$T/burst.py" "$n" >"$T/$fmt.out" ||
		fail "$fmt: the program failed"
	expect_eq "$fmt: fds closed by the program" "$(cat "$T/$fmt.out")" $((2 * n))
done
log=$(one_log "$T/json.*.log")
expect_eq "json: close records" "$(q "$log" "len(CL)")" $((2 * n))
expect_eq "json: dropped" "$(q "$log" "T.get('close_records_dropped', 0)")" 0
expect_eq "json: fds_closed" "$(q "$log" "T['fds_closed']")" $((2 * n))
expect_eq "json: bytes in" "$(q "$log" "tot('bytes_in')")" "$n"
log=$(one_log "$T/text.*.log")
expect_eq "text: close records" "$(grep -c ' sockmeter close ' "$log")" $((2 * n))
grep -q close_records_dropped "$log" && fail "text: $(grep -o 'close_records_dropped=[0-9]*' "$log")"
exit 0
