# SOCKMETER_CONFIG naming a file that does not exist: one "sockmeter:" line
# naming the file, the program unchanged, metering goes on with defaults.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
cfg=$T/no-such-dir/none.ini
SOCKMETER_CONFIG=$cfg SOCKMETER_LOG=$T/m.log SOCKMETER_FORMAT=json \
	sm "$PROGS/pairxfer" 40000 6 >"$T/with.out" 2>"$T/with.err"
st=$?
plain "$PROGS/pairxfer" 40000 6 >"$T/without.out" 2>&1
expect_eq "exit status" "$st" 6
cmp -s "$T/with.out" "$T/without.out" || fail "stdout differs"
expect_eq "sockmeter: lines on stderr" "$(sm_lines "$T/with.err")" 1
expect_eq "other lines on stderr" "$(grep -vc '^sockmeter:' "$T/with.err")" 0
grep -qF "$cfg" "$T/with.err" || fail "the message does not name $cfg: $(cat "$T/with.err")"
expect_eq "exit bytes_out" "$(q "$T/m.log" "tot('bytes_out')")" 40000
check "$T/m.log" "{'sizes_in', 'calls_in', 'errors_in', 'peer'} <= keys()" "default categories"
exit 0
