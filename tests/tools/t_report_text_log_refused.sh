# A text-format log (the default format) is not machine-readable: the
# report refuses it as a whole with one message that says to use JSON, not
# one message per line; alone it gives exit status 1, beside a JSON log 0.
. "$(dirname "$0")/lib.sh"
fixture_paced
[ -x "$PROGS/pairxfer" ] || fail "missing $PROGS/pairxfer (make progs)"
SOCKMETER_LOG=$T/text.log SOCKMETER_INTERVAL=0.1 sm "$PROGS/pairxfer" 100000 >/dev/null ||
	fail "pairxfer failed"
[ "$(wc -l <"$T/text.log")" -ge 3 ] || fail "precondition: short text log"
"$REPORT" "$T/text.log" >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 1 ] || fail "text log alone: exit status $st, expected 1"
grep -q "^sockmeter-report: $T/text.log: a text-format log (format = text), not read: .*needs JSON logs (sockmeter -f json" "$T/err" ||
	fail "message: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 2 ] && grep -q "no valid record" "$T/err" ||
	fail "expected the text-log message and 'no valid record' only: $(cat "$T/err")"
json=$(ls "$SM_FIX"/paced/logs/python3.*.log)
"$REPORT" "$T/text.log" "$json" >"$T/out" 2>"$T/err" || fail "text + json log: exit status $?"
[ "$(wc -l <"$T/err")" = 1 ] || fail "text + json log: $(cat "$T/err")"
grep -q "== Processes (1)" "$T/out" || fail "the JSON log was not reported: $(head -3 "$T/out")"
exit 0
