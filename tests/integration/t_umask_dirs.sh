# A program whose umask takes the owner's bits (tinyproxy sets 0177) gets
# its default log directory and state directory all the same, mode 0700,
# and a directory of the user's left without them (mode 0600, made so by
# an earlier version under such a umask) is given them back.  Before,
# mkdir(0700) under umask 0177 made both directories 0600: no log and no
# state file for that run and every later metered program of that uid
# (a helper's sweep of daemons: tinyproxy's close records all lost).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (setpriv to a user of its own)"
command -v setpriv >/dev/null || skip "needs setpriv"
need_prog pairxfer
own_user 13
mkdir -m 1777 "$T/state"
export SOCKMETER_STATE=$T/state/%u SOCKMETER_FORMAT=json
unset SOCKMETER_LOG

# run UMASK: pairxfer as U under UMASK, metered with the default path.
run() {
	"${as_u[@]}" sh -c 'umask "$1"; shift; exec "$@"' sh "$1" \
		timeout 20 env LD_PRELOAD="$LIB" "$PROGS/pairxfer" 20000 4 \
		>"$T/out" 2>"$T/err"
	expect_eq "umask $1: exit status" "$?" 4
	expect_eq "umask $1: sockmeter lines" "$(sm_lines "$T/err")" 0
	log=$(one_log "$DIR/pairxfer.*.log")
	expect_eq "umask $1: bytes_out" "$(q "$log" "tot('bytes_out')")" 20000
	expect_eq "umask $1: bytes_in" "$(q "$log" "tot('bytes_in')")" 20000
	expect_eq "umask $1: log directory mode" "$(stat -c %a "$DIR")" 700
	expect_eq "umask $1: state directory mode" "$(stat -c %a "$T/state/$U")" 700
	rm -f "$log"
}

run 0177
# Left without the owner's bits (as an earlier version made them).
chmod 600 "$DIR" "$T/state/$U"
run 0022
exit 0
