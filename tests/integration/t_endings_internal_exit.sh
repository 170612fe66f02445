# Endings that pass glibc's internal _exit, past the _exit wrapper: before,
# none wrote an exit record, the state file stayed live and a later
# recovery wrote "end":"killed" for a process that had exited normally
# (tests/progs/endings).
#  - quick_exit: the record comes after the program's at_quick_exit
#    handlers (their 10 bytes are in it);
#  - daemon(3): the parent, which ends inside it, and the daemon each
#    write their own;
#  - syscall(SYS_exit_group).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/state" "$T/logs"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
run() { # HOW STATUS
	SOCKMETER_LOG="$T/logs/%p.log" sm "$PROGS/endings" "$1" >"$T/$1.out"
	rc=$?
	[ "$rc" = "$2" ] || fail "endings $1 exited $rc, expected $2"
}
# exit_rec LOG - the log's last record: "end" (or "-") and the totals.
exit_rec() {
	"$PY" -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
t = r.get("totals", {})
print(r["type"], r.get("end", "-"), t.get("bytes_in"), t.get("bytes_out"))' "$1"
}
run quick 8
pid=$(sed -n 's/^pid=//p' "$T/quick.out")
expect_eq "quick_exit" "$(exit_rec "$T/logs/$pid.log")" "exit - 100010 100010"
run group 11
pid=$(sed -n 's/^pid=//p' "$T/group.out")
expect_eq "exit_group" "$(exit_rec "$T/logs/$pid.log")" "exit - 100000 100000"
run daemon 0
pid=$(sed -n 's/^pid=//p' "$T/daemon.out")
expect_eq "daemon's parent" "$(exit_rec "$T/logs/$pid.log")" "exit - 100000 100000"
wait_for 10 grep -q '^daemon=' "$T/daemon.out" || fail "the daemon did not print"
dpid=$(sed -n 's/^daemon=//p' "$T/daemon.out")
wait_for 10 sh -c "! kill -0 $dpid 2>/dev/null" || fail "the daemon lives on"
wait_for 10 test -s "$T/logs/$dpid.log" || fail "no log of the daemon"
expect_eq "the daemon" "$(exit_rec "$T/logs/$dpid.log")" "exit - 500 500"
expect_eq "state files left" "$(ls "$T/state" | wc -l)" 0
exit 0
