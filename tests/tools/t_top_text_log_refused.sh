# sockmeter top needs JSON: given a text-format log, or the pid of a
# process whose environment says SOCKMETER_FORMAT=text, it says so (and
# how to get JSON) and exits 2 instead of showing an empty table.
. "$(dirname "$0")/lib.sh"
[ -x "$PROGS/pairxfer" ] || fail "missing $PROGS/pairxfer (make progs)"
SOCKMETER_LOG=$T/text.log sm "$PROGS/pairxfer" 10000 >/dev/null || fail "pairxfer failed"
"$TOPCMD" --once "$T/text.log" >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 2 ] || fail "text log: exit status $st, expected 2"
grep -q "^sockmeter top: $T/text.log is a text-format log (format = text), which sockmeter top does not read; it needs JSON: run the program with sockmeter -f json" "$T/err" ||
	fail "message: $(cat "$T/err")"
SOCKMETER_FORMAT=text bg_start sleep 20
"$TOPCMD" --once "$BG_PID" >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 2 ] || fail "text pid: exit status $st, expected 2"
grep -q "^sockmeter top: pid $BG_PID writes a text-format log" "$T/err" || fail "pid message: $(cat "$T/err")"
exit 0
