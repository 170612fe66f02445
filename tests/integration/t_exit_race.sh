# Threads that call exit() at the same moment (tests/progs/exitrace): glibc
# shares the exit handlers out between them and the first to find none
# left ends the process, which cut the exit record short (no record in
# most runs with seven threads; the state file was left for recovery to
# call "killed").  Every run must leave exactly one exit record with every
# byte, and no state file.
. "$(dirname "$0")/lib.sh"

need_prog exitrace
for threads in 1 6; do
	for i in $(seq 8); do
		n=$threads.$i
		SOCKMETER_LOG=$T/$n.log SOCKMETER_FORMAT=json \
			SOCKMETER_STATE=$T/state \
			sm "$PROGS/exitrace" "$threads" >"$T/$n.out" 2>"$T/$n.err"
		st=$?
		[ "$st" -le "$threads" ] || fail "$n: exit status $st"
		bytes=$(field bytes "$T/$n.out")
		[ -s "$T/$n.log" ] || fail "$threads threads, run $i: no log"
		expect_eq "$threads threads, run $i: exit records [bytes_in, bytes_out]" \
			"$(q "$T/$n.log" "[[r['totals']['bytes_in'], r['totals']['bytes_out']] for r in R if r['type'] == 'exit']")" \
			"[[$bytes, $bytes]]"
	done
done
left=$(find "$T/state" -type f 2>/dev/null | wc -l)
expect_eq "state files left" "$left" 0
exit 0
