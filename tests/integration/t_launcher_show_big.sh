# sockmeter -s on a busy program's log: a log over 1 MB is not poured on
# stderr whole (a helper's churn showed 658 MB there).  Shown: its last 10
# records other than close records (the exit record with the totals last),
# and one line counting what was left out, exactly: every close record,
# and the records other than close records before those 10.  Text and
# JSON; a small log is still shown whole (t_launcher).
. "$(dirname "$0")/lib.sh"

need_prog churnrate
launcher=$SM_TOP/scripts/sockmeter
export SOCKMETER_LIB=$LIB
for fmt in json text; do
	mkdir -p "$T/$fmt"
	# About 40,000 close records (20,000 closes/s for 2 s), an interval
	# record every 0.1 s: over 1 MB, and more than 10 records besides.
	"$launcher" -s -f "$fmt" -i 0.1 -o "$T/$fmt/%n.%p.log" -- \
		"$PROGS/churnrate" 20000 2 >"$T/$fmt.out" 2>"$T/$fmt.err" ||
		fail "$fmt: the launcher failed: $(tail -n 3 "$T/$fmt.err")"
	log=$(one_log "$T/$fmt/churnrate.*.log")
	size=$(stat -c %s "$log")
	[ "$size" -gt $((1 << 20)) ] || fail "$fmt: precondition: the log is only $size bytes"
	errsize=$(stat -c %s "$T/$fmt.err")
	[ "$errsize" -lt 200000 ] || fail "$fmt: -s wrote $errsize bytes on stderr"
	if [ "$fmt" = json ]; then
		closes=$(grep -c '^{"type":"close"' "$log")
		others=$(grep -vc '^{"type":"close"' "$log")
		# The records shown are the log's last 10 other than close ones.
		expect_eq "$fmt: records shown" \
			"$(grep '^{' "$T/$fmt.err" | md5sum)" \
			"$(grep -v '^{"type":"close"' "$log" | tail -n 10 | md5sum)"
		grep '^{' "$T/$fmt.err" | tail -n 1 | grep -q '^{"type":"exit"' ||
			fail "$fmt: the last record shown is not the exit record"
	else
		closes=$(grep -c '^[0-9T:.Z-]* sockmeter close ' "$log")
		others=$(grep -Ec '^[0-9T:.Z-]+ sockmeter (interval|exit|exec) ' "$log")
		expect_eq "$fmt: record headers shown" \
			"$(grep -E '^[0-9T:.Z-]+ sockmeter ' "$T/$fmt.err" | md5sum)" \
			"$(grep -E '^[0-9T:.Z-]+ sockmeter (interval|exit|exec) ' "$log" | tail -n 10 | md5sum)"
		grep -A1 ' sockmeter exit ' "$T/$fmt.err" | grep -q '^  totals: ' ||
			fail "$fmt: the exit record's totals not shown"
	fi
	[ "$others" -gt 10 ] || fail "$fmt: precondition: only $others records other than close records"
	line=$(grep '^sockmeter: the log is ' "$T/$fmt.err") || fail "$fmt: no line saying what was left out"
	[[ $line == *"above are its last 10 records other than close records; $closes close records and $((others - 10)) older records are not shown"* ]] ||
		fail "$fmt: the line does not count what the log holds ($closes close, $others others): $line"
done
exit 0
