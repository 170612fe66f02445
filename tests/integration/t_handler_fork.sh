# A signal handler forks while its thread is blocked in recv, a metered
# call (tests/progs/handlerfork.c); in the child the handler returns into
# that call, whose wrapper still holds the slot pointer it took before the
# fork.  The child moves its counters to a spare reservation only where no
# such pointer can be left (a fork in a handler keeps the addresses): the
# parent's record holds its own three receives and no more, the child's
# interrupted receive is in the child's record, and a child that makes its
# own state file before returning does not die.  With the spare taken in
# every fork, the parent's record said calls_in=4 and the second child
# died of SIGSEGV.
. "$(dirname "$0")/lib.sh"
need_prog handlerfork
for mode in plain socket; do
	rm -f "$T"/*.log
	SOCKMETER_LOG="$T/%p.log" sm "$PROGS/handlerfork" "$mode" >"$T/out" ||
		fail "$mode: handlerfork failed: $(cat "$T/out")"
	grep -qx 'parent_recv=5 child=0' "$T/out" ||
		fail "$mode: $(cat "$T/out")"
	parent=$(grep -l "prog=handlerfork" "$T"/*.log | while read -r f; do
		n=${f##*/}
		echo "${n%.log}"
	done | sort -n | head -n 1)
	[ -n "$parent" ] || fail "$mode: no log"
	grep -A1 '^.* exit pid=' "$T/$parent.log" | grep -q ' bytes_in=10 calls_in=3 ' ||
		fail "$mode: parent's record: $(cat "$T/$parent.log")"
	n=$(grep -h -A1 '^.* exit pid=' "$T"/*.log | grep -c ' bytes_in=0 calls_in=1 ')
	[ "$n" = 1 ] || fail "$mode: the child's record: $(cat "$T"/*.log)"
done
