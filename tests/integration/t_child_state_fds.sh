# A fork child's state file is made at its first tracked fd, outside the
# program's fd table (core/state.c create_job, in progfd_run's child): it
# was opened in the program's table for a moment.
#  - race: in 200 fork children a thread opens /dev/null in a loop while
#    the main thread makes the child's first tracked fd: the thread always
#    gets the lowest free number (before: 27 of 300 children saw another);
#  - full: a child at its fd limit (soft 64, filled with /dev/null) sends
#    on the socket it inherited, then is killed: its numbers come back from
#    its state file, exact (before: no file, no word, nothing recovered).
. "$(dirname "$0")/lib.sh"

need_prog childfds
SOCKMETER_LOG=$T/race.%p.log sm "$PROGS/childfds" race 200 >"$T/race.out" 2>"$T/race.err" ||
	fail "childfds race failed: $(cat "$T/race.err")"
[ -s "$T/race.err" ] && fail "race: stderr: $(head -n 3 "$T/race.err")"
expect_eq "children" "$(field children "$T/race.out")" 200
expect_eq "children whose thread's open got another number than the lowest" \
	"$(field bad "$T/race.out")" 0

mkdir -m 700 "$T/state"
n=$((123456 + 789))
SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/full.%p.log" \
	sm "$PROGS/childfds" full "$n" >"$T/full.out" 2>"$T/full.err" ||
	fail "childfds full failed: $(cat "$T/full.err")"
[ -s "$T/full.err" ] && fail "full: stderr: $(head -n 3 "$T/full.err")"
child=$(field child "$T/full.out")
expect_eq "bytes the parent read" "$(field got "$T/full.out")" "$n"
ls "$T/state/$child"-*.state >/dev/null 2>&1 ||
	fail "the child at its fd limit has no state file: $(ls "$T/state")"
recovered_killed "child at its fd limit" "$T/full.$child.log" "$n" 0
exit 0
