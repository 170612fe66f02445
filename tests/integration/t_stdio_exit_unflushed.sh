# A program that _exits with 300 bytes still in its FILE buffer sent only
# what it flushed: the log counts the 5,000 bytes the peer received, not
# 5,300.  (The child's last interval record carries its totals; an exit
# record, where _exit writes one, must agree.)
. "$(dirname "$0")/lib.sh"

need_prog stdio_exit
SOCKMETER_LOG=$T/x.%p.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/stdio_exit" "$T/x.%p.log" >"$T/out" 2>"$T/err" ||
	fail "stdio_exit failed: $(cat "$T/err")"
child=$(field child "$T/out")
expect_eq "bytes the peer received" "$(field received "$T/out")" 5000
log=$T/x.$child.log
[ -f "$log" ] || fail "no log from the child ($log)"
expect_eq "child: bytes_out in its last interval record" \
	"$(q "$log" "IV[-1]['totals']['bytes_out']")" 5000
expect_eq "child: bytes_out in every record" \
	"$(q "$log" "sorted(set(r['totals']['bytes_out'] for r in R if r['totals']['bytes_out']))")" "[5000]"
exit 0
