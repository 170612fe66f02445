# A killed process's recovered exit record keeps the bytes_*_unseen of the
# connections it had closed, as its written records did: uring_xfer moves
# bytes through io_uring (which no preload sees; the kernel's count shows
# them as unseen) on a TCP connection, closes it, and is SIGKILLed once the
# close records are in its log.  The recovered totals showed 0 (the state
# file did not hold the unseen bytes of closed connections).
. "$(dirname "$0")/lib.sh"
SM_UNSEEN_OK=1 # the logs are meant to show unseen bytes
need_prog uring_xfer
out=300001 back=45678 plain=1234
launcher=$SM_TOP/scripts/sockmeter
mkdir -p "$T/state"
SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	SOCKMETER_LOG=$T/u.%p.log bg_start env LD_PRELOAD="$LIB" \
	"$PROGS/uring_xfer" $out $back $plain 30 >"$T/u.out"
vpid=$BG_PID
wait_for 10 grep -q '^closed' "$T/u.out" || {
	grep -q 'unavailable' "$T/u.out" 2>/dev/null && skip "no io_uring here"
	fail "uring_xfer did not close its connection: $(cat "$T/u.out")"
}
# Both close records written (and so their unseen bytes in the state).
wait_for 10 sh -c "[ \$(grep -c '\"type\":\"close\".*bytes_out_unseen' $T/u.*.log 2>/dev/null || echo 0) -ge 2 ]" ||
	fail "no close records: $(cat "$T"/u.*.log 2>/dev/null | head -c 400)"
pkill -KILL -P "$vpid" -x uring_xfer || fail "no uring_xfer to kill"
bg_wait "$vpid" 10
SOCKMETER_STATE=$T/state "$launcher" recover "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
log=$(one_log "$T/u.*.log")
expect_eq "end" "$(q "$log" "E['end']")" killed
expect_eq "the close records' bytes_out_unseen" "$(q "$log" "sum(c.get('bytes_out_unseen', 0) for c in closes(kind='tcp'))")" $((out + back))
expect_eq "recovered totals: bytes_out_unseen" "$(q "$log" "tot('bytes_out_unseen')")" $((out + back))
expect_eq "recovered totals: bytes_in_unseen" "$(q "$log" "tot('bytes_in_unseen')")" $((out + back))
exit 0
