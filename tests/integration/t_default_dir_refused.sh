# A default log directory that is refused (another user's: what a user
# namespace's fake root leaves in /tmp, or an attacker's squat) loses no
# numbers: the process says so once, keeps its state file at its exit
# (marked unwritten), and a recovery writes its exit record once it can,
# never into the refused directory.  Before, the exit took the refused
# log for no log at all and removed the state file with every number (a
# helper's sweep of containers).
#  - as a user of its own (setpriv): /tmp/sockmeter-U owned by another
#    user; the file is kept, and once the squat is gone and the user's
#    own directory is there (as the user's next metered program makes
#    it), that user's `sockmeter recover` writes the exit record, exact;
#  - as root (the squat bound over /tmp/sockmeter-0 in a mount namespace
#    of the test's own): root's recovery puts the records beside the
#    state file (PID-START.recovered.log), exact, and writes nothing into
#    the squatted directory.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (setpriv, a mount namespace)"
command -v setpriv >/dev/null || skip "needs setpriv"
need_prog pairxfer
U=$((61000 + ($$ + 7) % 4000))
DIR=/tmp/sockmeter-$U
cleanup_dir() {
	rm -rf "$DIR"
	sm_cleanup
}
trap cleanup_dir EXIT
chmod 755 "$T"
mkdir -m 1777 "$T/state"
export SOCKMETER_STATE=$T/state/%u SOCKMETER_FORMAT=json
as_u=(setpriv --reuid="$U" --regid="$U" --clear-groups)
cd /tmp || fail "cd /tmp"

# As a user of its own.
rm -rf "$DIR"
mkdir -m 700 "$DIR" && chown "$((U + 1))" "$DIR"
"${as_u[@]}" timeout 20 env LD_PRELOAD="$LIB" "$PROGS/pairxfer" 20000 4 \
	>"$T/u.out" 2>"$T/u.err"
expect_eq "user: exit status" "$?" 4
expect_eq "user: sockmeter: lines" "$(sm_lines "$T/u.err")" 1
grep -qF "$DIR" "$T/u.err" || fail "user: the warning does not name $DIR: $(cat "$T/u.err")"
[ -z "$(ls -A "$DIR")" ] || fail "user: wrote into the refused directory: $(ls "$DIR")"
ls "$T/state/$U" | grep -q '\.state$' ||
	fail "user: no state file kept after the exit: the numbers are lost"
rm -rf "$DIR"
mkdir -m 700 "$DIR" && chown "$U" "$DIR"
"${as_u[@]}" "$SM_TOP/scripts/sockmeter" recover -q "$T/state/$U" 2>"$T/u.rec" ||
	fail "user: recover: $(cat "$T/u.rec")"
log=$(one_log "$DIR/pairxfer.*.log")
expect_eq "user: end" "$(q "$log" "E['end']")" exit-recovered
expect_eq "user: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000
expect_eq "user: bytes_in" "$(q "$log" "tot('bytes_in')")" 20000
ls "$T/state/$U" | grep -q '\.state$' && fail "user: the state file stayed after its recovery"

# As root, the squat bound over root's default directory.
mkdir -m 700 "$T/squat" && chown "$((U + 1))" "$T/squat"
[ -d /tmp/sockmeter-0 ] || mkdir -m 700 /tmp/sockmeter-0
unshare -m --propagation private sh -c '
	mount --bind "$1" /tmp/sockmeter-0 || exit 90
	timeout 20 env LD_PRELOAD="$2" "$3" 20000 4 >"$4/r.out" 2>"$4/r.err"
	echo "status=$?" >"$4/r.status"
	"$5" recover -q "$6" 2>"$4/r.rec"' \
	sh "$T/squat" "$LIB" "$PROGS/pairxfer" "$T" "$SM_TOP/scripts/sockmeter" \
	"$T/state/0"
st=$?
[ "$st" = 90 ] && skip "cannot bind-mount in a mount namespace here"
expect_eq "root: exit status" "$(cat "$T/r.status")" status=4
expect_eq "root: sockmeter: lines" "$(sm_lines "$T/r.err")" 1
[ -z "$(ls -A "$T/squat")" ] || fail "root: wrote into the squatted directory: $(ls "$T/squat")"
log=$(one_log "$T/state/0/*.recovered.log")
expect_eq "root: end" "$(q "$log" "E['end']")" exit-recovered
expect_eq "root: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000
exit 0
