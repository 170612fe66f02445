# SOCKMETER_LOG in a directory that does not exist: exactly one
# "sockmeter:" warning on stderr however many records are lost (close
# records, interval records every 0.1 s, the exit record), and the
# program's output and exit status are unchanged.  As root, a process that
# then changes only its groups (as dnsmasq does) gets no second warning
# about a uid it did not change to.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
need_prog slow_sender
dir=/nonexistent/dir
[ -e /nonexistent ] && dir=$T/nonexistent/dir
SOCKMETER_LOG=$dir/x.log SOCKMETER_FORMAT=json \
	sm "$PROGS/pairxfer" 30000 7 >"$T/with.out" 2>"$T/with.err"
st=$?
plain "$PROGS/pairxfer" 30000 7 >"$T/without.out" 2>&1
expect_eq "exit status" "$st" 7
cmp -s "$T/with.out" "$T/without.out" || fail "stdout differs"
expect_eq "sockmeter: lines on stderr" "$(sm_lines "$T/with.err")" 1
expect_eq "other lines on stderr" "$(grep -vc '^sockmeter:' "$T/with.err")" 0
grep -qF "$dir/x.log" "$T/with.err" || fail "the warning does not name the log: $(cat "$T/with.err")"

SOCKMETER_LOG=$dir/y.%p.log SOCKMETER_INTERVAL=0.1 \
	sm "$PROGS/slow_sender" 10 50 1000 "$T/times" >"$T/slow.out" 2>"$T/slow.err" ||
	fail "slow_sender failed: $(cat "$T/slow.err")"
expect_eq "slow_sender: sockmeter: lines on stderr" "$(sm_lines "$T/slow.err")" 1
expect_eq "slow_sender: other lines on stderr" "$(grep -vc '^sockmeter:' "$T/slow.err")" 0

if [ "$(id -u)" = 0 ]; then
	cat >"$T/groups.py" <<'PYEOF'
import os, socket, time
a, b = socket.socketpair()
a.sendall(b"g" * 100)
b.recv(100)
time.sleep(1.3)  # the ticker tries the log
os.setgroups([])
os.setgid(65534)
a.sendall(b"g" * 100)
b.recv(100)
print("gid", os.getegid())
PYEOF
	SOCKMETER_LOG=$dir/z.%p.log sm "$PY" "$T/groups.py" >"$T/g.out" 2>"$T/g.err" ||
		fail "groups.py failed: $(cat "$T/g.err")"
	expect_eq "groups only: sockmeter: lines on stderr" "$(sm_lines "$T/g.err")" 1
fi
[ -e "$dir" ] && fail "$dir was created"
exit 0
