# A default log directory that is refused (another user's, open to all:
# what an attacker would plant, or what a user namespace's fake root leaves
# in /tmp) loses no numbers and leaks none: the process says so once, keeps
# its state file at its exit (marked unwritten), and no recovery writes
# into that directory, even into a file the squatter made there for it.
# Before, the exit took the refused log for no log at all and removed the
# state file with every number (a helper's sweep of containers); the first
# fix had recoveries append to a squatter's file (a reviewer's proof).
#  - as a user of its own (setpriv): the file is kept; that user's
#    `sockmeter recover` with the squat still there writes nothing, into
#    the squatter's file least of all, and keeps the file; once the squat
#    is gone and the user's own directory is there (as the user's next
#    metered program makes it), it writes the exit record, exact;
#  - as root (the squat bound over /tmp/sockmeter-0 in a mount namespace
#    of the test's own): root's recovery puts the records beside the
#    state file (PID-START.recovered.log), exact, not into the squatter's
#    file;
#  - an explicit log path in a directory of another user's (a service's
#    own log directory): root's recovery of a killed process still makes
#    its log there, as ever.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (setpriv, a mount namespace)"
command -v setpriv >/dev/null || skip "needs setpriv"
need_prog pairxfer
own_user 7
mkdir -m 1777 "$T/state"
export SOCKMETER_STATE=$T/state/%u SOCKMETER_FORMAT=json

# squat DIR: DIR made by another user (U + 1), open to all.
squat() {
	mkdir -m 777 "$1" && chown "$((U + 1))" "$1" && chmod 777 "$1"
}

# bait DIR PID: the squatter's file where the log of PID would go.
bait() {
	: >"$1/pairxfer.$2.log" && chown "$((U + 1))" "$1/pairxfer.$2.log" &&
		chmod 666 "$1/pairxfer.$2.log"
}

# As a user of its own.
rm -rf "$DIR"
squat "$DIR"
"${as_u[@]}" timeout 20 env LD_PRELOAD="$LIB" "$PROGS/pairxfer" 20000 4 \
	>"$T/u.out" 2>"$T/u.err"
expect_eq "user: exit status" "$?" 4
expect_eq "user: sockmeter: lines" "$(sm_lines "$T/u.err")" 1
grep -qF "$DIR" "$T/u.err" || fail "user: the warning does not name $DIR: $(cat "$T/u.err")"
[ -z "$(ls -A "$DIR")" ] || fail "user: wrote into the refused directory: $(ls "$DIR")"
file=$(ls "$T/state/$U" | grep '\.state$') ||
	fail "user: no state file kept after the exit: the numbers are lost"
bait "$DIR" "${file%%-*}"
"${as_u[@]}" "$SM_TOP/scripts/sockmeter" recover "$T/state/$U" >/dev/null 2>"$T/u.rec1"
[ -s "$DIR/pairxfer.${file%%-*}.log" ] &&
	fail "user: its recovery wrote into the squatter's file"
ls "$T/state/$U" | grep -q "^${file%%.state}" ||
	fail "user: its recovery dropped the file it could not write: $(cat "$T/u.rec1")"
rm -rf "$DIR"
mkdir -m 700 "$DIR" && chown "$U" "$DIR"
"${as_u[@]}" "$SM_TOP/scripts/sockmeter" recover -q "$T/state/$U" 2>"$T/u.rec" ||
	fail "user: recover: $(cat "$T/u.rec")"
log=$(one_log "$DIR/pairxfer.*.log")
expect_eq "user: end" "$(q "$log" "E['end']")" exit-recovered
expect_eq "user: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000
expect_eq "user: bytes_in" "$(q "$log" "tot('bytes_in')")" 20000
ls "$T/state/$U" | grep -q '\.state' && fail "user: the state file stayed after its recovery"

# As root, the squat bound over root's default directory, the squatter's
# file there before the recovery.
squat "$T/squat"
[ -d /tmp/sockmeter-0 ] || mkdir -m 700 /tmp/sockmeter-0
# shellcheck disable=SC2016
unshare -m --propagation private sh -c '
	mount --bind "$1" /tmp/sockmeter-0 || exit 90
	timeout 20 env LD_PRELOAD="$2" "$3" 20000 4 >"$4/r.out" 2>"$4/r.err"
	echo "status=$?" >"$4/r.status"
	for f in "$6"/*.state; do
		p=${f##*/}
		: >"$1/pairxfer.${p%%-*}.log"
		chmod 666 "$1/pairxfer.${p%%-*}.log"
	done
	"$5" recover -q "$6" 2>"$4/r.rec"' \
	sh "$T/squat" "$LIB" "$PROGS/pairxfer" "$T" "$SM_TOP/scripts/sockmeter" \
	"$T/state/0"
st=$?
[ "$st" = 90 ] && skip "cannot bind-mount in a mount namespace here"
expect_eq "root: exit status" "$(cat "$T/r.status")" status=4
expect_eq "root: sockmeter: lines" "$(sm_lines "$T/r.err")" 1
ls "$T/squat"/pairxfer.*.log >/dev/null 2>&1 || fail "root: the test made no bait"
for f in "$T/squat"/*; do
	[ -s "$f" ] && fail "root: wrote into the squatted directory: $f"
done
log=$(one_log "$T/state/0/*.recovered.log")
expect_eq "root: end" "$(q "$log" "E['end']")" exit-recovered
expect_eq "root: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000

# An explicit log directory of another user's: root's recovery makes the
# killed process's log there, as before.
mkdir -m 755 "$T/svc" && chown "$((U + 2))" "$T/svc"
SOCKMETER_LOG=$T/svc/app.%p.log LD_PRELOAD="$LIB" "$PY" -c '
import socket, sys, time
a, b = socket.socketpair()
a.sendall(b"s" * 3000); b.recv(3000)
open(sys.argv[1], "w").close()
time.sleep(60)' "$T/ready" &
spid=$!
wait_for 20 test -e "$T/ready" || fail "the service process did not start"
kill -KILL "$spid"
wait "$spid" 2>/dev/null
"$SM_TOP/scripts/sockmeter" recover -q "$T/state/0" 2>"$T/svc.rec" ||
	fail "service: recover: $(cat "$T/svc.rec")"
log=$(one_log "$T/svc/app.*.log")
expect_eq "service: end" "$(q "$log" "E['end']")" killed
expect_eq "service: bytes_out" "$(q "$log" "tot('bytes_out')")" 3000
exit 0
