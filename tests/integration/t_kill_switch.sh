# SOCKMETER=off: pure pass-through.  No log file is created, nothing is
# said on stderr, and the program's output and exit status are those it
# has without the preload.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
need_prog threads
mkdir -p "$T/logs"
for v in off OFF 0 false no; do
	SOCKMETER=$v SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json \
		sm "$PROGS/pairxfer" 100000 5 >"$T/on.out" 2>"$T/on.err"
	st=$?
	plain "$PROGS/pairxfer" 100000 5 >"$T/off.out" 2>"$T/off.err"
	expect_eq "SOCKMETER=$v: exit status" "$st" 5
	cmp -s "$T/on.out" "$T/off.out" || fail "SOCKMETER=$v: stdout differs"
	[ -s "$T/on.err" ] && fail "SOCKMETER=$v: stderr: $(head -n 3 "$T/on.err")"
done
SOCKMETER=off SOCKMETER_LOG=$T/logs/%n.%p.log \
	sm "$PROGS/threads" own 4 2000 >"$T/on.out" 2>"$T/on.err" ||
	fail "threads failed under SOCKMETER=off"
plain "$PROGS/threads" own 4 2000 >"$T/off.out" 2>&1
cmp -s "$T/on.out" "$T/off.out" || fail "threads: stdout differs"
[ -s "$T/on.err" ] && fail "threads: stderr: $(head -n 3 "$T/on.err")"
left=$(ls -A "$T/logs")
[ -z "$left" ] || fail "log files created with SOCKMETER=off: $left"
# The control: the same run with SOCKMETER=on does write its log there
# (else "no log" would prove nothing).
SOCKMETER=on SOCKMETER_LOG=$T/logs/%n.%p.log \
	sm "$PROGS/pairxfer" 100000 5 >/dev/null 2>"$T/on.err"
[ -n "$(ls -A "$T/logs")" ] || fail "no log with SOCKMETER=on: the control failed"
exit 0
