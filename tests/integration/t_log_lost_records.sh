# Close records the log refuses (a file size limit, a full disk) are
# counted as dropped, so that every record after them, and the exit record
# recovery writes once the log takes writes again, says how many:
# fds_closed = the close records in the log + close_records_dropped, as
# docs/log.md promises.  Before, a helper's churn of 300 connections on a
# full 64 KiB tmpfs left 63 close records in the log, fds_closed=300 and no
# close_records_dropped at all: 237 connections gone without a word.
#   fsize  RLIMIT_FSIZE of 48 KiB (ulimit -f) for a while
#   full   a 64 KiB tmpfs nearly full for the whole run, the exit record
#          written by `sockmeter recover` once there is room
# The totals must hold every byte moved either way.
. "$(dirname "$0")/lib.sh"

need_prog churnrate
launcher=$SM_TOP/scripts/sockmeter
MNT=
# Lazily: a process still running (a test that failed) may hold it.
cleanup_lost() {
	[ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
	sm_cleanup
}
trap cleanup_lost EXIT

# check_case NAME LOG MIN_DROPPED - the records of a churn (NAME.out) in
# LOG, more than MIN_DROPPED of them lost.
check_case() {
	local name=$1 log=$2 min=$3 conns bytes
	conns=$(sed -n 's/^connections=//p' "$T/$name.out")
	bytes=$(sed -n 's/^bytes=//p' "$T/$name.out")
	[ "${conns:-0}" -gt 1000 ] || fail "$name: only ${conns:-0} closes"
	grep -q "^sockmeter: log .*: cannot write" "$T/$name.err" ||
		fail "$name: the log never refused a write: $(cat "$T/$name.err")"
	expect_eq "$name: exit records" \
		"$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
	expect_eq "$name: fds_closed" "$(q "$log" "T['fds_closed']")" "$conns"
	expect_eq "$name: bytes_in" "$(q "$log" "T['bytes_in']")" "$bytes"
	expect_eq "$name: bytes_out" "$(q "$log" "T['bytes_out']")" "$bytes"
	expect_eq "$name: close records + close_records_dropped" \
		"$(q "$log" "len([r for r in R if r['type'] == 'close']) + T.get('close_records_dropped', 0)")" \
		"$conns"
	[ "$(q "$log" "T.get('close_records_dropped', 0)")" -gt "$min" ] ||
		fail "$name: too few records counted as dropped"
	echo "$name: $conns closes, $(q "$log" "len([r for r in R if r['type'] == 'close'])") close records in the log"
}

# fsize: a soft limit of 48 KiB while the churn runs, lifted (prlimit) after
# the first refusal: the exit record is written by the process itself.
mkdir -p "$T/fsize"
bg_start bash -c "echo \$\$ >'$T/fsize.pid'; ulimit -S -f 48; exec env LD_PRELOAD='$LIB' \
	SOCKMETER_LOG='$T/fsize/c.%p.log' SOCKMETER_FORMAT=json \
	SOCKMETER_STATE='$T/fsize.state' '$PROGS/churnrate' 2000 3" \
	>"$T/fsize.out" 2>"$T/fsize.err"
wait_for 20 grep -q "cannot write" "$T/fsize.err" ||
	fail "fsize: the log never refused a write: $(cat "$T/fsize.err")"
# churnrate itself (bash's pid, exec'd), under bg_start's timeout.
pid=$(cat "$T/fsize.pid")
prlimit --pid "$pid" --fsize=unlimited || fail "prlimit failed"
bg_wait "$BG_PID" 30 || fail "fsize: churnrate failed: $(cat "$T/fsize.err")"
# The refused batch's first 256 KiB of close records waited and were
# written once the limit was lifted (t_log_refused_then_writable): only
# what is beyond that is lost, maybe none.
check_case fsize "$T/fsize/c.$pid.log" -1

# full: a 64 KiB tmpfs with 4 KiB left for the whole run; the exit record
# too is refused and parked in the state file, which `sockmeter recover`
# writes once the filler is gone.
mkdir -p "$T/full" "$T/full.state"
if ! mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	echo "SKIP full: mount not permitted"
	exit 0
fi
MNT=$T/full
head -c $((60 * 1024)) /dev/zero >"$T/full/filler" 2>/dev/null
SOCKMETER_LOG=$T/full/c.%p.log SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/full.state \
	sm "$PROGS/churnrate" 2000 1.5 >"$T/full.out" 2>"$T/full.err" ||
	fail "full: churnrate failed: $(cat "$T/full.err")"
rm -f "$T/full/filler"
"$launcher" recover "$T/full.state" >"$T/full.rec" 2>&1 ||
	fail "full: recover failed: $(cat "$T/full.rec")"
# Most were refused for good: the log holds a hundred or so.
check_case full "$(echo "$T"/full/c.*.log)" 500
exit 0
