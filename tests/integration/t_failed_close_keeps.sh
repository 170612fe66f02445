# A call that would close an fd but fails leaves it open, and its
# connection goes on in the same record: dup3 with bad flags, close_range
# with bad flags (libc's and syscall()'s), dup2 over an fd at or above a
# lowered fd limit (tests/progs/failclose).  Before, each ended the
# connection in a close record at once and the rest of its bytes went to
# a second one.  Truth: 25 bytes each way on each end of one socketpair.
. "$(dirname "$0")/lib.sh"
SOCKMETER_LOG=$T/fc.log sm "$PROGS/failclose" >"$T/out" ||
	fail "failclose failed: $(cat "$T/out")"
n=$(grep -c ' sockmeter close ' "$T/fc.log")
expect_eq "close records" "$n" 2
for fd in 3 4; do
	grep -q " close .* fd=$fd kind=unix .* bytes_in=25 calls_in=4 bytes_out=25 calls_out=4 duration=" "$T/fc.log" ||
		fail "fd $fd: not one record of 25 bytes each way: $(cat "$T/fc.log")"
done
! grep -q 'close=unseen' "$T/fc.log" || fail "a close unseen: $(cat "$T/fc.log")"
exit 0
