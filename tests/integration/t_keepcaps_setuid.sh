# A daemon that keeps its capabilities across a drop to another user and
# takes root back later (proftpd's mod_cap: PR_SET_KEEPCAPS, setresuid to
# the user, capset to raise CAP_SETUID, setresuid(-1, 0, -1)) runs on
# under the preload.  Those calls change the calling thread only, glibc
# applies setresuid to every thread and aborts when one refuses: the
# ticker, without the capability, made every proftpd login abort.  The
# library now repeats keep-caps and capset on its ticker.
# tests/progs/capdrop makes the calls through libc and through syscall(),
# and once at once after the first socket (the ticker may not run yet).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (setresuid back to 0)"
for how in libc raw "libc now"; do
	# shellcheck disable=SC2086 # "libc now" is two arguments
	SOCKMETER_LOG=$T/cap.${how% *}${how#* }.log sm "$PROGS/capdrop" $how >"$T/out.$how" 2>&1 ||
		fail "capdrop ($how) failed: $(cat "$T/out.$how")"
	grep -q '^ok euid=0$' "$T/out.$how" || fail "capdrop ($how): $(cat "$T/out.$how")"
	log=$T/cap.${how% *}${how#* }.log
	grep -q ' sockmeter exit .* fds_closed=2' "$log" ||
		fail "no exit record ($how): $(cat "$log")"
	grep -q 'totals: bytes_in=1 calls_in=1 bytes_out=1 calls_out=1 ' "$log" ||
		fail "totals ($how): $(cat "$log")"
done
exit 0
