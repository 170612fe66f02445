# A log with a garbage line, a JSON line that is no record and a torn last
# line (a live log caught mid-write): one message per bad line on stderr,
# "sockmeter-report: FILE:LINE: ...", with the right line numbers; every
# other record is still read and the exit status is 0.  The process totals
# are the last interval record's plus what the connections closed after it
# moved (close records are lean): here exactly the torn exit record's.  An unreadable file among good ones: one message,
# status 0.  Nothing valid at all: status 1.
. "$(dirname "$0")/lib.sh"
fixture_paced
log=$(ls "$SM_FIX"/paced/logs/python3.*.log)
n=$(wc -l <"$log")
[ "$n" -ge 8 ] || fail "precondition: only $n lines in $log"
bad=$T/bad.log
{
	sed -n 1,2p "$log"
	echo 'this is not JSON {'
	sed -n 3,4p "$log"
	echo '{"hello": 1}'
	sed -n "5,$((n - 1))p" "$log"
	sed -n "${n}p" "$log" | head -c 100     # torn: no newline
} >"$bad"
"$REPORT" -f json "$bad" >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 0 ] || fail "exit status $st: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" = 3 ] || fail "expected 3 messages: $(cat "$T/err")"
grep -q "^sockmeter-report: $bad:3: not valid JSON" "$T/err" || fail "line 3: $(cat "$T/err")"
grep -q "^sockmeter-report: $bad:6: not a sockmeter record" "$T/err" || fail "line 6: $(cat "$T/err")"
grep -q "^sockmeter-report: $bad:$((n + 2)): not valid JSON (the last line, not terminated" "$T/err" ||
	fail "torn last line $((n + 2)): $(cat "$T/err")"
export BAD=$bad LOG=$log N=$n OUT=$T/out
pycheck "rest read" <<'PY'
rep = json.load(open(os.environ["OUT"]))
good = records(os.environ["LOG"])[:-1]          # all but the torn exit record
p, = rep["processes"]
assert p["records"] == len(good), (p["records"], len(good))
assert p["state"] == "no exit record", p
ex = records(os.environ["LOG"])[-1][1]
assert ex["type"] == "exit", ex["type"]
for k in ("bytes_in", "bytes_out", "calls_in", "calls_out"):
    assert p[k] == ex["totals"][k], (k, p, ex["totals"])
last = max((r for _, r in good if "totals" in r), key=lambda r: r["ts"])
closes = [r for _, r in good if r["type"] == "close" and r["ts"] > last["ts"]]
assert closes, "precondition: no close record after the last interval record"
PY
"$REPORT" "$log" "$T/missing.log" >/dev/null 2>"$T/err2" || fail "missing file: status $?"
[ "$(cat "$T/err2")" = "sockmeter-report: $T/missing.log: cannot read: No such file or directory" ] ||
	fail "missing file message: $(cat "$T/err2")"
printf 'garbage\n{"type": "interval"}\n' >"$T/junk.log"
"$REPORT" "$T/junk.log" >"$T/out3" 2>"$T/err3"
st=$?
[ "$st" = 1 ] || fail "no valid record: exit status $st, expected 1"
grep -q "no valid record" "$T/err3" || fail "no 'no valid record' message: $(cat "$T/err3")"
[ ! -s "$T/out3" ] || fail "output with no valid record: $(cat "$T/out3")"
exit 0
