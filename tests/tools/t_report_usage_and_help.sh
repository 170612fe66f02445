# --help explains the output, the errors and the exit status (0); usage
# errors (no log, a bad --format, a negative --top, a bad --size) give
# exit status 2 and a message, not a traceback.
. "$(dirname "$0")/lib.sh"
"$REPORT" --help >"$T/help" 2>&1 || fail "--help: exit status $?"
for w in "--format" "--plot" "--top" "Exit status" "opened" "port"; do
	grep -q -- "$w" "$T/help" || fail "--help does not mention $w"
done
check_usage() {
	"$REPORT" "$@" >"$T/out" 2>"$T/err"
	local st=$?
	[ "$st" = 2 ] || fail "$*: exit status $st, expected 2"
	grep -q "usage: sockmeter-report" "$T/err" || fail "$*: no usage line: $(cat "$T/err")"
	! grep -q Traceback "$T/err" || fail "$*: traceback"
}
check_usage
check_usage --format xml x.log
check_usage --top -1 x.log
check_usage --size 10 x.log
exit 0
