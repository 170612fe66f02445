# Under strict overcommit (vm.overcommit_memory = 2) the automatic capacity
# is bounded by the soft limit at start-up and 16,384 (docs/config.md): a
# fake /proc/sys/vm/overcommit_memory saying 2 is bound over the real one
# in a mount namespace of the test's own (the machine's setting is never
# touched).  tests/progs/highfd starts with a soft limit of 2048, raises it
# to 4096 itself (as nginx's workers do) and moves bytes over a pair on
# fds 10/11 (dup 12) and one on 2050/2051 (dup 2052):
#  - strict: 2050 is beyond the 2048 fds metered, passed through, one
#    warning; the pair on 10 counted exactly;
#  - strict with max_fds = 4096, and not strict: everything counted, no
#    warning;
#  - strict with soft and hard limits equal: 16,384, highfd on 16390.
# Skipped where a mount namespace cannot be had, or the hard limit is
# below 4096.
. "$(dirname "$0")/lib.sh"
need_prog highfd

echo 2 >"$T/oc"
unshare -m sh -c "mount --bind '$T/oc' /proc/sys/vm/overcommit_memory" \
	2>/dev/null || skip "no mount namespace here (unshare -m)"
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
[ "$hard" -ge 4096 ] || skip "a hard fd limit of $hard (4096 needed)"

run() { # NAME STRICT(0/1) MAX_FDS
	local bind=true
	[ "$2" = 1 ] && bind="mount --bind '$T/oc' /proc/sys/vm/overcommit_memory"
	unshare -m sh -c "$bind && ulimit -Sn 2048 &&
		exec env SOCKMETER_MAX_FDS='$3' SOCKMETER_LOG='$T/$1.log' \
			SOCKMETER_FORMAT=json LD_PRELOAD='$LIB' \
			timeout 30 '$PROGS/highfd' raise 4096 10 2050" \
		>"$T/$1.out" 2>"$T/$1.err" ||
		fail "$1: highfd failed: $(cat "$T/$1.err")"
	grep -q "pair fd=2050 peer=2051 dupfd=2052 bytes=10050" "$T/$1.out" ||
		fail "$1: fd 2050 moved less: $(cat "$T/$1.out")"
}

totals() { q "$T/$1.log" "[E['totals']['bytes_out'], E['totals']['bytes_in']]"; }

run strict 1 ""
# fds 10 to 12: 10,010 from 10, 10 from 12, all read on 11.
expect_eq "strict: [bytes_out, bytes_in]" "$(totals strict)" "[10020, 10020]"
expect_eq "strict: warnings" "$(grep -c . "$T/strict.err")" 1
grep -q "fd 2050 is beyond the 2048 fds metered" "$T/strict.err" ||
	fail "strict: the warning does not name fd 2050 and 2048: $(cat "$T/strict.err")"

run strict_max 1 4096
expect_eq "strict, max_fds 4096: [bytes_out, bytes_in]" "$(totals strict_max)" "[20080, 20080]"
[ ! -s "$T/strict_max.err" ] || fail "strict, max_fds 4096: said $(cat "$T/strict_max.err")"

run lax 0 ""
expect_eq "not strict: [bytes_out, bytes_in]" "$(totals lax)" "[20080, 20080]"
[ ! -s "$T/lax.err" ] || fail "not strict: said $(cat "$T/lax.err")"

# Soft and hard limits equal (a container's 1,048,576, a unit's
# LimitNOFILE): bounded by 16,384 all the same.
if [ "$hard" -ge 16400 ]; then
	unshare -m sh -c "mount --bind '$T/oc' /proc/sys/vm/overcommit_memory &&
		ulimit -Sn $hard &&
		exec env SOCKMETER_LOG='$T/equal.log' SOCKMETER_FORMAT=json \
			LD_PRELOAD='$LIB' timeout 30 '$PROGS/highfd' 10 16390" \
		>"$T/equal.out" 2>"$T/equal.err" ||
		fail "equal: highfd failed: $(cat "$T/equal.err")"
	expect_eq "soft = hard: [bytes_out, bytes_in]" "$(totals equal)" "[10020, 10020]"
	grep -q "fd 16390 is beyond the 16384 fds metered" "$T/equal.err" ||
		fail "soft = hard: no warning for fd 16390 and 16384: $(cat "$T/equal.err")"
else
	echo "SKIP soft = hard: the hard limit ($hard) is below 16,400"
fi
