# A user namespace's fake root (unshare -r, a rootless container's root)
# is, outside, the user who made the namespace: %u names that user
# (core/procns.h), so its default directories are the user's own, shared
# with the user's other processes, and never root's.  Before, its log went
# to /tmp/sockmeter-0 and its state file to the state directory's 0, which
# the real root's made first: both refused, no log at all, and nothing to
# recover a killed process by but a hand-run recover as that fake root.
#  - a fake root's program, the default log path: its log is the user's
#    /tmp/sockmeter-U, exact; root's /tmp/sockmeter-0 is left as it was;
#  - a fake root's process killed: the user's `sockmeter recover`, outside
#    the namespace, writes its records, exact;
#  - the user's own process killed: a recover run by the fake root writes
#    its records, exact (the header's uid is the parent's, compared with
#    the directory's owner in the namespace's terms);
#  - sockmeter-report --state, in the namespace, reads a live fake root's
#    state file; the launcher's -s there finds the log and shows it.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (setpriv to a user of its own)"
command -v setpriv >/dev/null || skip "needs setpriv"
command -v unshare >/dev/null || skip "needs unshare"
need_prog pairxfer
PYU=/usr/bin/python3
[ -x "$PYU" ] || skip "needs $PYU (a python3 any user can run)"
own_user 11
mkdir -m 1777 "$T/state" "$T/ready"
export SOCKMETER_STATE=$T/state/%u SOCKMETER_FORMAT=json
unset SOCKMETER_LOG
"${as_u[@]}" unshare -r true 2>/dev/null ||
	skip "user $U cannot make a user namespace here"
[ -d /tmp/sockmeter-0 ] || mkdir -m 700 /tmp/sockmeter-0
root_before=$(ls -A /tmp/sockmeter-0 | sort)

# victim NAME CMD...: a python3 program run by CMD, metered, that moves
# 123,456 bytes over a socketpair and waits; killed once ready.
cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
a, b = socket.socketpair()
a.sendall(b"x" * 123456)
n = 0
while n < 123456:
    n += len(b.recv(65536))
open(sys.argv[1], "w").close()
time.sleep(60)
PYEOF
chmod 644 "$T/victim.py"
victim_start() {
	local name=$1
	shift
	"$@" env LD_PRELOAD="$LIB" "$PYU" "$T/victim.py" "$T/ready/$name" \
		>"$T/$name.out" 2>"$T/$name.err" &
	wait_for 20 test -e "$T/ready/$name" || fail "$name: did not start"
}
victim_kill() {
	pkill -KILL -f "$T/victim.py" || fail "nothing to kill"
	wait 2>/dev/null
}

# A fake root's program, the default log path.
"${as_u[@]}" unshare -r timeout 20 env LD_PRELOAD="$LIB" "$PROGS/pairxfer" \
	20000 4 >"$T/ns.out" 2>"$T/ns.err"
expect_eq "fake root: exit status" "$?" 4
expect_eq "fake root: sockmeter lines" "$(sm_lines "$T/ns.err")" 0
log=$(one_log "$DIR/pairxfer.*.log")
expect_eq "fake root: log owner" "$(stat -c %u "$log")" "$U"
expect_eq "fake root: end" "$(q "$log" "E.get('end', 'exit')")" exit
expect_eq "fake root: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000
expect_eq "fake root: bytes_in" "$(q "$log" "tot('bytes_in')")" 20000
expect_eq "fake root: root's directory" "$(ls -A /tmp/sockmeter-0 | sort)" \
	"$root_before"
[ -e "$T/state/0" ] && fail "fake root: a state directory 0: $(ls -la "$T/state")"

# A fake root's process, live: sockmeter-report --state in the namespace
# reads its state file; killed: the user's recover outside.
victim_start nsvictim "${as_u[@]}" unshare -r
"${as_u[@]}" unshare -r "$SM_TOP/scripts/sockmeter-report" --state "" \
	"$(one_log "$DIR/pairxfer.*.log")" >"$T/report" 2>&1
grep -q 'python3 .*no exit record *123456 *123456' "$T/report" ||
	fail "report --state: the live fake root not read: $(cat "$T/report")"
victim_kill
ls "$T/state/$U" | grep -q '\.state$' ||
	fail "fake root: no state file in $T/state/$U: $(ls -R "$T/state")"
"${as_u[@]}" "$SM_TOP/scripts/sockmeter" recover -q "$T/state/$U" \
	2>"$T/rec1" || fail "user's recover: $(cat "$T/rec1")"
log=$(one_log "$DIR/python3.*.log")
expect_eq "killed fake root: end" "$(q "$log" "E['end']")" killed
expect_eq "killed fake root: bytes_out" "$(q "$log" "tot('bytes_out')")" 123456
expect_eq "killed fake root: bytes_in" "$(q "$log" "tot('bytes_in')")" 123456
rm -f "$DIR"/python3.*.log

# The user's process killed; the fake root's recover.
victim_start uvictim "${as_u[@]}"
victim_kill
"${as_u[@]}" unshare -r "$SM_TOP/scripts/sockmeter" recover -q \
	"$T/state/$U" 2>"$T/rec2" || fail "fake root's recover: $(cat "$T/rec2")"
log=$(one_log "$DIR/python3.*.log")
expect_eq "killed user: end" "$(q "$log" "E['end']")" killed
expect_eq "killed user: bytes_out" "$(q "$log" "tot('bytes_out')")" 123456
ls "$T/state/$U" | grep -q '\.state' &&
	fail "killed user: the state file stayed: $(cat "$T/rec2")"

# The launcher's -s in the namespace.
"${as_u[@]}" unshare -r "$SM_TOP/scripts/sockmeter" -s -- "$PROGS/pairxfer" \
	3000 2 >"$T/s.out" 2>"$T/s.err"
expect_eq "launcher -s: exit status" "$?" 2
grep -q "log of pid [0-9]*: $DIR/pairxfer\." "$T/s.err" ||
	fail "launcher -s: no log named: $(cat "$T/s.err")"
grep -q '"bytes_out":3000' "$T/s.err" ||
	fail "launcher -s: the log not shown: $(cat "$T/s.err")"
exit 0
