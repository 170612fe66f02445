# Without gnuplot on PATH the report is still printed, no plot file is
# made, one message names the Debian package, and the exit status is 1.
. "$(dirname "$0")/lib.sh"
fixture_download
mkdir -p "$T/empty"
PATH=$T/empty "$REPORT" --plot "$T/p.png" "$SM_FIX"/dl/logs/*.log >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 1 ] || fail "exit status $st, expected 1"
grep -q "== Processes (2)" "$T/out" || fail "no report printed"
[ ! -e "$T/p.png" ] || fail "a plot was made"
[ "$(cat "$T/err")" = "sockmeter-report: --plot needs gnuplot (Debian package gnuplot-nox); no plot made" ] ||
	fail "message: $(cat "$T/err")"
exit 0
