# [sockmeter] enabled = false in the ini file: pure pass-through, as with
# SOCKMETER=off.  SOCKMETER=on then overrides the file and meters again.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
mkdir -p "$T/logs"
printf '; metering off\n[sockmeter]\nenabled = false\n' >"$T/cfg.ini"
SOCKMETER_CONFIG=$T/cfg.ini SOCKMETER_LOG=$T/logs/%n.%p.log \
	SOCKMETER_FORMAT=json sm "$PROGS/pairxfer" 65536 3 >"$T/on.out" 2>"$T/on.err"
st=$?
plain "$PROGS/pairxfer" 65536 3 >"$T/off.out" 2>&1
expect_eq "exit status" "$st" 3
cmp -s "$T/on.out" "$T/off.out" || fail "stdout differs"
[ -s "$T/on.err" ] && fail "stderr: $(head -n 3 "$T/on.err")"
left=$(ls -A "$T/logs")
[ -z "$left" ] || fail "log files created with enabled = false: $left"

SOCKMETER=on SOCKMETER_CONFIG=$T/cfg.ini SOCKMETER_LOG=$T/logs/on.log \
	SOCKMETER_FORMAT=json sm "$PROGS/pairxfer" 65536 >"$T/on.out" 2>"$T/on.err" ||
	fail "pairxfer failed with SOCKMETER=on"
expect_eq "SOCKMETER=on over enabled = false: exit bytes_out" \
	"$(q "$T/logs/on.log" "tot('bytes_out')")" 65536
exit 0
